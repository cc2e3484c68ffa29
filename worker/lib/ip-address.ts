/** The eight 16-bit groups of an IPv6 literal as the URL parser writes it (hex groups, `::` compression). */
export function ipv6Groups(address: string): number[] | null {
  const halves = address.split("::");
  if (halves.length > 2) return null;
  const parse = (part: string) => (part ? part.split(":").map((group) => parseInt(group, 16)) : []);
  const head = parse(halves[0] ?? "");
  const tail = parse(halves[1] ?? "");
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? missing !== 0 : missing < 0) return null;
  const groups = [...head, ...Array<number>(missing).fill(0), ...tail];
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff) ? groups : null;
}

/**
 * Who a request comes from, for a per-source rate limit: the client address Cloudflare puts in
 * `CF-Connecting-IP` (a client cannot set it through Cloudflare), an IPv6 address cut to its /64 (one
 * subscriber gets a whole /64), or "unknown" without one (local development).
 */
export function requestSource(request: Request): string {
  const address = request.headers.get("cf-connecting-ip")?.trim().toLowerCase();
  if (!address) return "unknown";
  if (!address.includes(":")) return address;
  // An IPv4-mapped or -embedding spelling names the IPv4 address.
  const embedded = /:(\d+\.\d+\.\d+\.\d+)$/.exec(address)?.[1];
  if (embedded) return embedded;
  const groups = ipv6Groups(address);
  return groups
    ? `${groups
        .slice(0, 4)
        .map((group) => group.toString(16))
        .join(":")}::/64`
    : address;
}
