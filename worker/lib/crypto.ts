const encoder = new TextEncoder();

// One table lookup per byte: the key digest is hex-encoded on every authenticated request.
const HEX_BYTES = Array.from({ length: 256 }, (_, byte) => byte.toString(16).padStart(2, "0"));

function toHex(bytes: ArrayBuffer | Uint8Array): string {
  let hex = "";
  for (const byte of new Uint8Array(bytes)) hex += HEX_BYTES[byte];
  return hex;
}

export async function sha256Hex(text: string): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

export function base64UrlEncode(bytes: Uint8Array): string {
  let binary = "";
  for (const byte of bytes) binary += String.fromCharCode(byte);
  return btoa(binary).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

export function base64Decode(text: string): Uint8Array {
  const binary = atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  return Uint8Array.from(binary, (ch) => ch.charCodeAt(0));
}

/** Compares two secrets without leaking where they differ through timing. */
export function timingSafeEqual(a: string, b: string): boolean {
  const left = encoder.encode(a);
  const right = encoder.encode(b);
  if (left.byteLength !== right.byteLength) return false;
  return crypto.subtle.timingSafeEqual(left, right);
}

/**
 * Canonical JSON: object keys sorted at every depth, so equal values hash equal
 * however an upstream orders its fields. Written out with a stack, not recursion:
 * an upstream's tool definitions and results nest as deep as it likes (3,000
 * levels overflowed a recursive walk, and indexing answered 500), and JSON.parse
 * reads any depth.
 */
export function canonicalJson(value: unknown): string {
  const out: string[] = [];
  // Each entry is text to write as it is, or a value to write out.
  const pending: ({ text: string } | { value: unknown })[] = [{ value }];
  while (pending.length) {
    const next = pending.pop()!;
    if ("text" in next) {
      out.push(next.text);
      continue;
    }
    const current = next.value;
    const parts: ({ text: string } | { value: unknown })[] = [];
    if (Array.isArray(current)) {
      current.forEach((item: unknown, index) => parts.push({ text: index ? "," : "" }, { value: item }));
      parts.unshift({ text: "[" });
      parts.push({ text: "]" });
    } else if (current && typeof current === "object") {
      const entries = Object.entries(current as Record<string, unknown>)
        .filter(([, v]) => v !== undefined)
        .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
      entries.forEach(([k, v], index) => parts.push({ text: `${index ? "," : ""}${JSON.stringify(k)}:` }, { value: v }));
      parts.unshift({ text: "{" });
      parts.push({ text: "}" });
    } else {
      out.push(JSON.stringify(current) ?? "null");
      continue;
    }
    for (let index = parts.length - 1; index >= 0; index--) pending.push(parts[index]!);
  }
  return out.join("");
}
