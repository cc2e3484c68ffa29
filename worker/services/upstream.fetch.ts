import type { DiscoverResult } from "@modelcontextprotocol/client";
import { checkUpstreamUrl } from "./url-guard.ts";
import { resumesStream } from "./upstream-resilience.ts";
import { divertingResult, type ByteCount } from "./upstream.passthrough.ts";
import { requestScope } from "./upstream.scope.ts";

/** Why talking to an upstream failed, in the terms the API and MCP endpoint report. */
export type UpstreamFailureCode =
  | "url_not_allowed"
  | "upstream_unreachable"
  /** The upstream answered 401: the credentials sent (none, secret headers or an OAuth token) were refused. */
  | "upstream_unauthorized"
  | "upstream_protocol_error"
  | "upstream_response_too_large"
  | "too_many_tools"
  | "tool_list_too_large";

export class UpstreamFailure extends Error {
  constructor(
    readonly code: UpstreamFailureCode,
    message: string,
    /** With `upstream_unauthorized`: the upstream's `WWW-Authenticate` challenge, where OAuth discovery starts. */
    readonly challenge: string | null = null,
  ) {
    super(message);
    this.name = "UpstreamFailure";
  }
}

/** What the gateway needs to reach one upstream. Headers are already decrypted. */
export interface UpstreamTarget {
  /** Cache key: changes whenever URL or headers change (and, for OAuth, per grant subject). */
  cacheKey: string;
  url: string;
  headers: Record<string, string>;
  /** Names the per-call credential in `headers` (an OAuth token's version); a session is kept only while it is the same. */
  credential?: string;
  allowList: ReadonlySet<string>;
  /** The upstream's `server/discover` result when it speaks 2026-07-28 (found at indexing); absent for a 2025-era one. */
  discover?: DiscoverResult;
}

/**
 * Bytes of one upstream HTTP response (a tool result, a tools/list page). Counted
 * while the body streams in, so an oversized answer is cut off before it is
 * held in memory whole.
 */
export const MAX_UPSTREAM_RESPONSE_BYTES = 8 * 1024 * 1024;
const MAX_REDIRECTS = 5;

/**
 * fetch for upstream traffic: every redirect hop is checked against the URL
 * policy, and connection failures become `upstream_unreachable`. The optional
 * standalone SSE stream (GET without Last-Event-ID) is declined locally on
 * shared sessions, whose server-initiated messages belong to no one call; a
 * call's own relay session opens it (`standalone`), because upstreams (the
 * conformance suite's reference server among them) send sampling and
 * elicitation there rather than on the call's stream. A GET that resumes a
 * call's stream (Last-Event-ID: the upstream closed it to be polled, as the
 * 2025-11-25 spec allows) goes out under the same policy as the call.
 *
 * The SDK client transport calls it with a URL and a JSON string body. Both are
 * used as they are on every hop (a string can be sent again after a redirect),
 * which spares a Request copy and a body read on every call.
 */
export function guardedFetch(allowList: ReadonlySet<string>, standalone?: StandaloneStream): typeof fetch {
  // A call's standalone stream, which no upstream request's scope holds: paced and bounded per session.
  const sessionStreams: StreamPace = {};
  return async (input, init) => {
    if (input instanceof Request || (init?.body != null && typeof init.body !== "string")) {
      throw new TypeError("guardedFetch takes a URL and a string body, as the SDK transport sends them");
    }
    const method = (init?.method ?? "GET").toUpperCase();
    if (method === "GET") {
      const resuming = resumesStream(init?.headers);
      if (!resuming && !standalone) return new Response(null, { status: 405 });
      await paced(requestScope() ?? sessionStreams, init?.signal);
      // Whatever the upstream answers (a stream, 405, nothing), the call need not wait any longer.
      if (!resuming) {
        // Past its bound the stream is not opened again: refused as on a shared session, so the SDK stops asking.
        if ((bytesAnswered.get(sessionStreams) ?? 0) > MAX_UPSTREAM_RESPONSE_BYTES) {
          standalone!.settled();
          return new Response(null, { status: 405 });
        }
        return guarded(input, init, method, sessionStreams).finally(standalone!.settled);
      }
    }
    return guarded(input, init, method);
  };

  async function guarded(input: string | URL, init: RequestInit | undefined, method: string, unscoped?: object): Promise<Response> {
    let url = new URL(input).href;
    const request = { method, headers: init?.headers, body: init?.body ?? undefined };
    const refuseUnless = (candidate: string) => {
      const verdict = checkUpstreamUrl(candidate, allowList);
      if (!verdict.ok) throw new UpstreamFailure("url_not_allowed", `Upstream URL refused: ${verdict.reason}`);
    };
    refuseUnless(url);
    for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
      let response: Response;
      try {
        response = await fetch(url, { ...request, redirect: "manual", signal: init?.signal });
      } catch (error) {
        if (init?.signal?.aborted) throw error;
        throw new UpstreamFailure("upstream_unreachable", `Could not connect to the upstream: ${(error as Error).message}`);
      }
      if (response.status === 401) {
        await response.body?.cancel();
        // Refused before it was processed: the request may be sent again with other credentials.
        throw new UpstreamFailure(
          "upstream_unauthorized",
          "The upstream answered 401 Unauthorized",
          response.headers.get("www-authenticate"),
        );
      }
      const location = response.headers.get("location");
      if (response.status < 300 || response.status >= 400 || !location) {
        const count = responseBound(response, unscoped);
        const diverted = method === "POST" && typeof request.body === "string" ? divertingResult(request.body, response, count) : null;
        return diverted ?? (count ? counted(response, count) : response);
      }
      await response.body?.cancel();
      const next = new URL(location, url);
      refuseUnless(next.toString());
      // The request carries the service's secret headers and the call itself: never to another origin.
      if (next.origin !== new URL(url).origin) {
        throw new UpstreamFailure("url_not_allowed", `Upstream URL refused: it redirects to another origin (${next.origin})`);
      }
      // 301/302/303 would turn the POST into a GET and drop the call; only 307/308 keep it.
      if (response.status !== 307 && response.status !== 308) {
        throw new UpstreamFailure(
          "upstream_protocol_error",
          `The upstream answered ${response.status}; only 307/308 redirects are followed`,
        );
      }
      url = next.toString();
    }
    throw new UpstreamFailure("upstream_protocol_error", `The upstream redirected more than ${MAX_REDIRECTS} times`);
  }
}

/**
 * The least time between two GETs of one stream: an upstream request's (each resumption of its answer after the
 * upstream closed it) or a call's standalone stream. The SDK client reopens a stream the upstream closes after an
 * event id with no limit on how often, waiting only the upstream's own `retry:` delay: an upstream that answered
 * `retry: 0` and closed at once had one call reopen it about 600 times a second, a core of the isolate's CPU that
 * every tenant on it shares, for as long as the call lasts (10 minutes while each answer carries progress). Paced,
 * the same upstream gets one GET a second, the SDK's own delay when an upstream names none.
 */
export const MIN_STREAM_REOPEN_MS = 1_000;

/** When a stream's last GET went out. */
type StreamPace = object;
const lastReopen = new WeakMap<StreamPace, number>();

/** Waits until `stream` may open again (its first GET at once), or rejects when `signal` aborts meanwhile. */
async function paced(stream: StreamPace, signal: AbortSignal | null | undefined): Promise<void> {
  const now = Date.now();
  const last = lastReopen.get(stream);
  const at = last === undefined ? now : Math.max(now, last + MIN_STREAM_REOPEN_MS);
  lastReopen.set(stream, at);
  if (at <= now) return;
  signal?.throwIfAborted();
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", aborted);
      resolve();
    }, at - now);
    const aborted = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener("abort", aborted, { once: true });
  });
}

/** A relay session's standalone SSE stream: `settled` is called once the upstream has answered its GET, however. */
export interface StandaloneStream {
  settled: () => void;
}

/**
 * Bytes one upstream request (or a call's session's standalone stream) has been answered with so far, over every
 * response it took: a call's answer and each reopening of its stream. Bounded per response only, an upstream that closed its stream after an event id and
 * sent a new 6 MiB message on each reopening streamed 6 MiB a second into the call for its 10 minutes, and the
 * gateway held whatever its client did not read: a client that read nothing grew the isolate by 360 MB a minute.
 */
const bytesAnswered = new WeakMap<object, number>();

/**
 * The bound on a response's body: MAX_UPSTREAM_RESPONSE_BYTES, for all the responses of one upstream request (its
 * scope) together, or of a call's session's standalone stream (`unscoped`), or for this response alone. A declared length over it is refused before
 * reading, and an unencoded body's declared length is charged at once. Otherwise the body must be counted as it
 * streams (the count throws at the first byte past the bound); null when there is nothing to count, as the runtime
 * never delivers more than the declared length of a body it does not decode.
 */
function responseBound(response: Response, unscoped?: object): ByteCount | null {
  const tooLarge = () =>
    new UpstreamFailure("upstream_response_too_large", `The upstream's response is larger than ${MAX_UPSTREAM_RESPONSE_BYTES} bytes`);
  // Read by the SDK in the background, an SSE answer's error would not end the request: the scope does.
  const scope = requestScope();
  const counted = scope ?? unscoped;
  let received = 0;
  const charge = (bytes: number) => {
    received += bytes;
    if (!counted) return received;
    const total = (bytesAnswered.get(counted) ?? 0) + bytes;
    bytesAnswered.set(counted, total);
    return total;
  };
  const declared = response.headers.get("content-length");
  if (declared !== null && Number(declared) > MAX_UPSTREAM_RESPONSE_BYTES) {
    void response.body?.cancel();
    throw tooLarge();
  }
  // The runtime decodes a compressed body, and the declared length is the encoded one: gzip turns 8 MiB
  // into gigabytes. Only an unencoded body's declared length bounds what is read.
  const encoding = response.headers.get("content-encoding");
  if (declared !== null && Number.isFinite(Number(declared)) && (encoding === null || encoding === "identity")) {
    if (charge(Number(declared)) <= MAX_UPSTREAM_RESPONSE_BYTES) return null;
    void response.body?.cancel();
    throw tooLarge();
  }
  if (!response.body) return null;
  return (bytes) => {
    if (charge(bytes) <= MAX_UPSTREAM_RESPONSE_BYTES) return;
    const error = tooLarge();
    scope?.fail(error);
    throw error;
  };
}

/** The response with `count` applied to its body as it streams; its error ends the stream. */
function counted(response: Response, count: ByteCount): Response {
  const counter = new TransformStream<Uint8Array, Uint8Array>({
    transform(chunk, controller) {
      count(chunk.byteLength);
      controller.enqueue(chunk);
    },
  });
  return new Response(response.body!.pipeThrough(counter), response);
}
