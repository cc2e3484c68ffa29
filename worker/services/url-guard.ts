import { ipv6Groups } from "../lib/ip-address.ts";

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

  // "localhost." is localhost: compare names without their trailing root dot.
  const host = url.hostname.toLowerCase().replace(/\.+$/, "");
  const hostAndPort = url.port ? `${host}:${url.port}` : host;
  if (allowList.has(host) || allowList.has(hostAndPort)) return { ok: true, url };

  if (url.protocol !== "https:") return { ok: false, reason: "only https URLs are allowed" };
  if (BLOCKED_HOSTNAMES.some((pattern) => pattern.test(host))) return { ok: false, reason: `host ${host} is internal` };
  // A single-label name (`metadata`, `instance-data`) resolves through the network's search domains, i.e. inside it.
  if (!host.startsWith("[") && !host.includes(".")) return { ok: false, reason: `host ${host} is a single-label (internal) name` };
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

/**
 * Only global unicast (2000::/3) is public, less documentation (2001:db8::/32),
 * Teredo (2001::/32) and 6to4 (2002::/16), which embed IPv4 addresses. Everything
 * else (loopback, unspecified, IPv4-mapped or -compatible, NAT64, unique local,
 * link- and site-local, multicast, discard) is refused: fail closed.
 */
function isPrivateIpv6(address: string): boolean {
  const groups = ipv6Groups(address.toLowerCase());
  if (!groups) return true;
  const [first = 0, second = 0] = groups;
  if ((first & 0xe000) !== 0x2000) return true;
  if (first === 0x2001 && (second === 0x0db8 || second === 0)) return true;
  return first === 0x2002;
}
