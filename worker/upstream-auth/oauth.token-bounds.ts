/**
 * Bounds on what a token endpoint's answer may put in a grant. The authorization server is chosen by whoever
 * connects the service (a hostile tenant can run its own), and its answer was bounded only as a whole (256 KiB):
 * a 250 KiB access token was sealed into the workspace Durable Object, opened on every call and sent in every
 * upstream request's Authorization header, once for every grant a per-user service has (round 7, finding 2).
 * Real tokens are far smaller (a JWT with claims: a few KiB), and servers refuse larger headers anyway.
 */
export const MAX_TOKEN_CHARS = 16 * 1024;
/** The `scope` string a grant records (listed with the grant, kept per grant). */
export const MAX_SCOPE_CHARS = 8 * 1024;

/** Why an answer's token or scope is refused: a sentence naming the field and the bound, or null when it fits. */
export function tokenBoundBreach(answer: { access_token: string; refresh_token?: string; scope?: string }): string | null {
  const fields: [string, string | undefined, number][] = [
    ["access_token", answer.access_token, MAX_TOKEN_CHARS],
    ["refresh_token", answer.refresh_token, MAX_TOKEN_CHARS],
    ["scope", answer.scope, MAX_SCOPE_CHARS],
  ];
  for (const [field, value, limit] of fields) {
    if (typeof value === "string" && value.length > limit) {
      return `its ${field} is ${value.length} characters, over the ${limit} a grant keeps`;
    }
  }
  return null;
}
