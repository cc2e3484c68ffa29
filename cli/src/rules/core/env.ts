// `$NAME` / `${NAME}` references to the environment, in header values of http
// handlers, declared tools and connectors. A file may read only the names it lists.

const ENV_REFERENCE = /\$\{?([A-Za-z_][A-Za-z0-9_]*)\}?/g;

/** The environment names a value reads. */
export function envNames(value: string): string[] {
  return [...value.matchAll(ENV_REFERENCE)].map((match) => match[1]!);
}

/** A header value with `$NAME` / `${NAME}` replaced from `env` (names already checked against allowed_env). */
export function interpolateEnv(value: string, env: Readonly<Record<string, string | undefined>>): string {
  return value.replace(ENV_REFERENCE, (_, name: string) => (Object.hasOwn(env, name) ? env[name] : undefined) ?? "");
}
