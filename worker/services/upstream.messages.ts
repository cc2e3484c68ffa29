import { UpstreamFailure } from "./upstream.fetch.ts";
import { requestScope, type RequestScope } from "./upstream.scope.ts";

/**
 * Messages the upstream may send for one request (its answer's stream and every reopening of it): progress, log
 * messages, requests of the client and the answer. The response bound counts bytes, but each message costs the
 * SDK's parse and handling whatever its size: 8 MiB of tiny log messages (80,000 of them) took 4 s of the isolate's
 * CPU, and a stream may be reopened for the call's 10 minutes. Past the bound the request fails
 * `upstream_response_too_large` and further messages are dropped unread.
 */
export const MAX_UPSTREAM_MESSAGES = 10_000;

/** A client transport of either SDK: what it hands the client goes through `onmessage`. */
interface MessageSource {
  // Either SDK's signature (`never[]` takes both): the arguments are passed on as they came.
  onmessage?: ((...args: never[]) => void) | undefined;
}

const counts = new WeakMap<RequestScope | MessageSource, number>();

/**
 * Counts each message the transport hands its client against its request's scope. A message no request holds (a
 * call's own session's standalone stream) counts against the session when `ownSession` says it is one call's; a
 * shared session outlives its calls, so there it is not counted. Call it once the client is connected: connecting
 * sets `onmessage`.
 */
export function boundMessages(transport: MessageSource, ownSession: boolean): void {
  const deliver = transport.onmessage;
  if (!deliver) return;
  transport.onmessage = (...args) => {
    const scope = requestScope();
    const counted = scope ?? (ownSession ? transport : null);
    if (!counted) return deliver(...args);
    const count = (counts.get(counted) ?? 0) + 1;
    counts.set(counted, count);
    if (count <= MAX_UPSTREAM_MESSAGES) return deliver(...args);
    if (count === MAX_UPSTREAM_MESSAGES + 1) {
      scope?.fail(
        new UpstreamFailure("upstream_response_too_large", `The upstream sent more than ${MAX_UPSTREAM_MESSAGES} messages for one request`),
      );
    }
  };
}
