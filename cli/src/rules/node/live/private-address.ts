// Where a URL the input chose may not go: the agent's own machine and network. A `{url}` tool fetches what the
// model names, and the model reads what a page told it, so without this a page could have the agent read its cloud
// metadata (169.254.169.254), a local admin port or a LAN device, and hand the answer to the model. The host is
// resolved and every address it gives is checked; a redirect hop is checked the same way. The connection itself is
// made to an address checked again as it is dialled, so a name that resolves to a public address for the check and
// to a private one a moment later (DNS rebinding) is refused too.
import { lookup as lookupCallback, type LookupAddress, type LookupOptions } from "node:dns";
import { lookup } from "node:dns/promises";
import type { IncomingMessage } from "node:http";
import { BlockList, isIP } from "node:net";
import { Readable } from "node:stream";

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8], // "this network"
  ["10.0.0.0", 8],
  ["100.64.0.0", 10], // carrier-grade NAT
  ["127.0.0.0", 8],
  ["169.254.0.0", 16], // link-local, cloud metadata
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15], // benchmarking
  ["224.0.0.0", 3], // multicast and reserved
] as const)
  PRIVATE.addSubnet(network, prefix, "ipv4");
for (const [network, prefix] of [
  ["::", 127], // unspecified and loopback
  ["::ffff:0:0", 96], // IPv4-mapped: whatever it maps, not a public IPv6 host
  ["64:ff9b::", 96], // NAT64
  ["fc00::", 7], // unique local
  ["fe80::", 10], // link-local
  ["fec0::", 10], // site-local
  ["ff00::", 8], // multicast
] as const)
  PRIVATE.addSubnet(network, prefix, "ipv6");

const isPrivate = (address: string) => PRIVATE.check(address, isIP(address) === 6 ? "ipv6" : "ipv4");

/** The first private address the URL's host is or resolves to, or null (a host that does not resolve is fetch's to fail). */
export async function privateAddressOf(url: URL): Promise<string | null> {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (isIP(host)) return isPrivate(host) ? host : null;
  let addresses: { address: string }[];
  try {
    addresses = await lookup(host, { all: true, verbatim: true });
  } catch {
    return null;
  }
  return addresses.find(({ address }) => isPrivate(address))?.address ?? null;
}

/** The error a connection refused at dial time carries: the address the name resolved to then. */
export class PrivateAddressError extends Error {
  readonly code = "ERR_PRIVATE_ADDRESS";
  constructor(readonly address: string) {
    super(`resolved to the private address ${address}`);
  }
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/** `net`'s lookup, refusing a name any of whose addresses is refused (every address, as the first check does). */
function checkedLookup(refused: (address: string) => boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    lookupCallback(hostname, { ...options, all: true, verbatim: true }, (error, addresses) => {
      if (error) return callback(error, []);
      const refusal = addresses.find(({ address }) => refused(address));
      if (refusal) return callback(new PrivateAddressError(refusal.address), []);
      if (options.all) return callback(null, addresses);
      const [first] = addresses;
      if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
      callback(null, first.address, first.family);
    });
  };
}

/** Statuses whose response has no body, which `Response` refuses to be given one for. */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export interface DialedRequest {
  method: string;
  headers: Record<string, string>;
  body: string | undefined;
  signal: AbortSignal;
}

/** One request (no redirects followed) whose connection goes only to a public address. */
export function fetchPublicOnly(url: URL, init: DialedRequest): Promise<Response> {
  return fetchDialChecked(url, init, isPrivate);
}

/**
 * One request (no redirects followed) as a fetch `Response`, whose connection goes to no address `refused` names,
 * checked as the name is resolved for the dial. Node's fetch takes no lookup, so this is `node:http`; it asks for no
 * compression, so a body comes as the server's bytes. (Exported with `refused` for its tests, whose servers are local.)
 */
export async function fetchDialChecked(url: URL, init: DialedRequest, refused: (address: string) => boolean): Promise<Response> {
  // Imported when a live tool first fetches: a static import of `node:http` costs every `hooks run` process, live
  // tools or not, some 25 ms (Node builds its module's exports, and with them undici's WebSocket, at import).
  const { request: send } = url.protocol === "https:" ? await import("node:https") : await import("node:http");
  return new Promise((resolve, reject) => {
    const request = send(url.href, { method: init.method, headers: init.headers, signal: init.signal, lookup: checkedLookup(refused) });
    request.once("error", reject);
    request.once("response", (message: IncomingMessage) => {
      const headers = new Headers();
      for (let i = 0; i + 1 < message.rawHeaders.length; i += 2) headers.append(message.rawHeaders[i]!, message.rawHeaders[i + 1]!);
      const status = message.statusCode ?? 502;
      const bodyless = NULL_BODY.has(status) || init.method === "HEAD";
      if (bodyless) message.resume();
      // The same stream class at run time; the project's global types are the Workers' ones, which name it apart.
      const body = bodyless ? null : (Readable.toWeb(message) as unknown as ReadableStream<Uint8Array>);
      resolve(new Response(body, { status, statusText: message.statusMessage, headers }));
    });
    request.end(init.body);
  });
}
