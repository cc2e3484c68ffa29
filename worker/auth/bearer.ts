/**
 * The one reading of `Authorization: Bearer …` that authentication and the
 * CSRF check share. A request that names the Bearer scheme authenticates by
 * that credential alone, never by the browser's session beside it: the CSRF
 * check lets bearer requests through (a page cannot make a browser send one
 * cross-origin), so a malformed one ("Bearer a b") must not fall back to the
 * cookie it carries.
 */
const AUTHORIZATION = "authorization";

/** The request sends `Authorization: Bearer …`, well formed or not. */
export const namesBearerScheme = (request: Request): boolean => /^Bearer\s/i.test(request.headers.get(AUTHORIZATION) ?? "");

/** The single token of a Bearer `Authorization` header, or null (no such header, or not exactly one token). */
export const bearerToken = (request: Request): string | null =>
  /^Bearer\s+(\S+)$/i.exec(request.headers.get(AUTHORIZATION) ?? "")?.[1] ?? null;
