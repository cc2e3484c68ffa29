import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from "jose";

/** Cloudflare Access puts its signed assertion in this header on every proxied request. */
export const ACCESS_JWT_HEADER = "cf-access-jwt-assertion";

const remoteKeySets = new Map<string, JWTVerifyGetKey>();

/** The team's signing keys, fetched from Access and cached per isolate by jose. */
export function accessKeySet(teamDomain: string): JWTVerifyGetKey {
  let keys = remoteKeySets.get(teamDomain);
  if (!keys) {
    keys = createRemoteJWKSet(new URL(`https://${teamDomain}/cdn-cgi/access/certs`));
    remoteKeySets.set(teamDomain, keys);
  }
  return keys;
}

/**
 * Verifies an Access JWT (signature, issuer, audience, expiry) and returns the
 * user's email, or null for anything that does not verify.
 */
export async function verifyAccessJwt(
  token: string,
  options: { teamDomain: string; audience: string; keys: JWTVerifyGetKey },
): Promise<string | null> {
  try {
    const { payload } = await jwtVerify(token, options.keys, {
      issuer: `https://${options.teamDomain}`,
      audience: options.audience,
    });
    return typeof payload.email === "string" && payload.email.includes("@") ? payload.email : null;
  } catch {
    return null;
  }
}
