import { base64Decode, base64UrlEncode } from "../lib/crypto.ts";

/**
 * Service secrets (secret headers, upstream OAuth client secrets and tokens) are
 * sealed with AES-GCM under the deployment's SECRETS_KEY. What the secret belongs
 * to (the service id, or the service and grant subject) is bound as additional
 * data, so a sealed value copied onto another service or grant does not open.
 */
const VERSION = "v1";
const keys = new Map<string, Promise<CryptoKey>>();

function importKey(secretsKey: string): Promise<CryptoKey> {
  let key = keys.get(secretsKey);
  if (!key) {
    const raw = base64Decode(secretsKey);
    if (raw.byteLength !== 32) throw new Error("SECRETS_KEY must be 32 bytes, base64-encoded");
    key = crypto.subtle.importKey("raw", raw, "AES-GCM", false, ["encrypt", "decrypt"]);
    keys.set(secretsKey, key);
  }
  return key;
}

/** Seals `plaintext` so it opens only with the same key and the same `binding` (bound as additional data). */
export async function sealSecret(plaintext: string, binding: string, secretsKey: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(binding) },
    await importKey(secretsKey),
    new TextEncoder().encode(plaintext),
  );
  return `${VERSION}.${base64UrlEncode(iv)}.${base64UrlEncode(new Uint8Array(ciphertext))}`;
}

export async function openSecret(sealed: string, binding: string, secretsKey: string): Promise<string> {
  const [version, iv, ciphertext] = sealed.split(".");
  if (version !== VERSION || !iv || !ciphertext) throw new Error("unrecognised secret envelope");
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: base64Decode(iv), additionalData: new TextEncoder().encode(binding) },
    await importKey(secretsKey),
    base64Decode(ciphertext),
  );
  return new TextDecoder().decode(plaintext);
}

export const sealHeaders = (headers: Record<string, string>, serviceId: string, secretsKey: string): Promise<string> =>
  sealSecret(JSON.stringify(headers), serviceId, secretsKey);

export async function openHeaders(sealed: string, serviceId: string, secretsKey: string): Promise<Record<string, string>> {
  return JSON.parse(await openSecret(sealed, serviceId, secretsKey)) as Record<string, string>;
}
