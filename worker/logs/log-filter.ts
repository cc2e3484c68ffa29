/**
 * A log query's WHERE clause: the fixed scope (workspace and tool or service), then each optional filter
 * that the query sets. Values are always bound, never spliced into the SQL.
 */
export function logWhere(
  scope: [clause: string, value: string][],
  filters: [clause: string, value: string | number | readonly string[] | undefined][],
): { where: string; params: (string | number)[] } {
  const clauses: string[] = [];
  const params: (string | number)[] = [];
  for (const [clause, value] of [...scope, ...filters]) {
    if (value === undefined) continue;
    clauses.push(clause);
    // A list fills a clause with one placeholder per value, e.g. `kind IN (?, ?)`.
    if (typeof value === "object") params.push(...value);
    else params.push(value);
  }
  return { where: clauses.join(" AND "), params };
}
