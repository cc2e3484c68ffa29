/**
 * Decides which upstream URLs the gateway may contact. Production allows only
 * https to public hosts; hosts on the configured dev allow-list may use http and
 * private addresses. Every redirect hop is checked again (see guardedFetch).
 */
export type UrlVerdict = { ok: true; url: URL } | { ok: false; reason: string };

const BLOCKED_HOSTNAMES = [/^localhost$/, /\.localhost$/, /^metadata\.google\.internal$/, /\.internal$/, /\.local$/];

export function parseAllowList(value: string | undefined): Set<string> {
  return new Set(
    (value ?? "")
      .split(",")
      .map((entry) => entry.trim().toLowerCase())
      .filter(Boolean),
  );
}

export function checkUpstreamUrl(raw: string, allowList: ReadonlySet<string>): UrlVerdict {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { ok: false, reason: "not a valid absolute URL" };
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") return { ok: false, reason: `scheme ${url.protocol} is not allowed` };
  if (url.username || url.password) return { ok: false, reason: "credentials in the URL are not allowed; use secret headers" };

  const host = url.hostname.toLowerCase();
  if (allowList.has(host) || allowList.has(url.host.toLowerCase())) return { ok: true, url };

  if (url.protocol !== "https:") return { ok: false, reason: "only https URLs are allowed" };
  if (BLOCKED_HOSTNAMES.some((pattern) => pattern.test(host))) return { ok: false, reason: `host ${host} is internal` };
  const ipv4 = parseIpv4(host);
  if (ipv4 && isPrivateIpv4(ipv4)) return { ok: false, reason: `address ${host} is private, loopback, link-local or reserved` };
  if (host.startsWith("[") && isPrivateIpv6(host.slice(1, -1))) {
    return { ok: false, reason: `address ${host} is private, loopback, link-local or reserved` };
  }
  return { ok: true, url };
}

function parseIpv4(host: string): number[] | null {
  // The WHATWG URL parser already normalises decimal, octal and hex forms to dotted quads.
  const match = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  return match ? match.slice(1).map(Number) : null;
}

function isPrivateIpv4([a, b]: number[]): boolean {
  if (a === undefined || b === undefined) return true;
  return (
    a === 0 || // "this network"
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) || // carrier-grade NAT
    (a === 169 && b === 254) || // link-local, cloud metadata
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 192 && b === 0) ||
    (a === 198 && (b === 18 || b === 19)) || // benchmarking
    a >= 224 // multicast and reserved
  );
}

function isPrivateIpv6(address: string): boolean {
  const lower = address.toLowerCase();
  if (lower === "::" || lower === "::1") return true;
  const mapped = /^::ffff:(.+)$/.exec(lower)?.[1];
  if (mapped) {
    const dotted = parseIpv4(mapped);
    if (dotted) return isPrivateIpv4(dotted);
    // The URL parser writes mapped addresses as hex groups (::ffff:a9fe:a9fe).
    const groups = mapped.split(":").map((group) => parseInt(group, 16));
    if (groups.length === 2 && groups.every((g) => Number.isInteger(g))) {
      const [hi = 0, lo = 0] = groups;
      return isPrivateIpv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
    }
    return true;
  }
  const first = parseInt(lower.split(":")[0] || "0", 16);
  return (first & 0xfe00) === 0xfc00 || (first & 0xffc0) === 0xfe80 || (first & 0xff00) === 0xff00;
}
