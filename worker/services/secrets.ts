import { base64Decode, base64UrlEncode } from "../lib/crypto.ts";

/**
 * Service secret headers are sealed with AES-GCM under the deployment's
 * SECRETS_KEY. The service id is bound as additional data, so a sealed value
 * copied onto another service does not open.
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

export async function sealHeaders(headers: Record<string, string>, serviceId: string, secretsKey: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const plaintext = new TextEncoder().encode(JSON.stringify(headers));
  const ciphertext = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: new TextEncoder().encode(serviceId) },
    await importKey(secretsKey),
    plaintext,
  );
  return `${VERSION}.${base64UrlEncode(iv)}.${base64UrlEncode(new Uint8Array(ciphertext))}`;
}

export async function openHeaders(sealed: string, serviceId: string, secretsKey: string): Promise<Record<string, string>> {
  const [version, iv, ciphertext] = sealed.split(".");
  if (version !== VERSION || !iv || !ciphertext) throw new Error("unrecognised secret header envelope");
  const plaintext = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: base64Decode(iv), additionalData: new TextEncoder().encode(serviceId) },
    await importKey(secretsKey),
    base64Decode(ciphertext),
  );
  return JSON.parse(new TextDecoder().decode(plaintext)) as Record<string, string>;
}
