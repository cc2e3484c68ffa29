import { base64UrlEncode, base64Decode, timingSafeEqual } from "../lib/crypto.ts";

/**
 * Local development only: a signed cookie standing in for Cloudflare Access.
 * Issued by /dev/login, which exists only when DEV_LOGIN is "on".
 */
export const DEV_SESSION_COOKIE = "rr_dev_session";
const SESSION_TTL_MS = 12 * 60 * 60 * 1000;
const encoder = new TextEncoder();

async function signingKey(secretsKey: string): Promise<CryptoKey> {
  // Derive a separate HMAC key so the encryption key is never used to sign.
  const material = await crypto.subtle.digest("SHA-256", encoder.encode(`rayrun-dev-session:${secretsKey}`));
  return crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

async function sign(payload: string, secretsKey: string): Promise<string> {
  const mac = await crypto.subtle.sign("HMAC", await signingKey(secretsKey), encoder.encode(payload));
  return base64UrlEncode(new Uint8Array(mac));
}

export async function issueDevSession(email: string, secretsKey: string): Promise<string> {
  const payload = base64UrlEncode(encoder.encode(JSON.stringify({ email, exp: Date.now() + SESSION_TTL_MS })));
  return `${payload}.${await sign(payload, secretsKey)}`;
}

export async function readDevSession(token: string, secretsKey: string): Promise<string | null> {
  const [payload, signature] = token.split(".");
  if (!payload || !signature) return null;
  if (!timingSafeEqual(signature, await sign(payload, secretsKey))) return null;
  try {
    const claims = JSON.parse(new TextDecoder().decode(base64Decode(payload))) as { email?: unknown; exp?: unknown };
    if (typeof claims.email !== "string" || typeof claims.exp !== "number" || claims.exp < Date.now()) return null;
    return claims.email;
  } catch {
    return null;
  }
}
