const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

/** A random identifier such as `svc_k3j9…`: prefix says what it names, 20 base-36 characters of entropy (~103 bits). */
export function newId(prefix: string, length = 20): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  let out = "";
  for (const byte of bytes) out += ALPHABET[byte % 36];
  return `${prefix}_${out}`;
}

export const nowIso = () => new Date().toISOString();
