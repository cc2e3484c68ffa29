import { allowInsecureRequests, customFetch, type CustomFetchOptions, type HttpRequestOptions } from "oauth4webapi";
import { joinBytes } from "../services/chunk-reader.ts";
import { UpstreamFailure } from "../services/upstream.ts";
import { checkUpstreamUrl } from "../services/url-guard.ts";

/**
 * Bytes of one answer from an authorization server or a metadata document.
 * Metadata and token responses are a few KiB; anything past this is refused
 * while it streams in, before it is held whole.
 */
export const MAX_OAUTH_RESPONSE_BYTES = 256 * 1024;
/** One request of the flow (metadata, registration, token, revocation), headers and body included. */
export const OAUTH_REQUEST_TIMEOUT_MS = 10_000;

/**
 * The fetch every request of the upstream OAuth flow goes through: the upstream
 * URL policy on the URL (so a metadata document cannot point the gateway at a
 * private address), no redirects (an authorization server has no reason to
 * send its metadata or token endpoint elsewhere), a deadline over the whole
 * exchange, and a bound on the body. Failures speak the upstream codes:
 * `url_not_allowed`, `upstream_unreachable`, `upstream_response_too_large`.
 */
export function guardedOAuthFetch(allowList: ReadonlySet<string>) {
  return async (url: string, init: { method: string; headers: Record<string, string>; body?: unknown; signal?: AbortSignal }) => {
    const verdict = checkUpstreamUrl(url, allowList);
    if (!verdict.ok) throw new UpstreamFailure("url_not_allowed", `OAuth URL refused (${hostOf(url)}): ${verdict.reason}`);
    const deadline = AbortSignal.timeout(OAUTH_REQUEST_TIMEOUT_MS);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    const host = verdict.url.host;
    try {
      const response = await fetch(url, {
        method: init.method,
        headers: init.headers,
        body: init.body as BodyInit | undefined,
        redirect: "manual",
        signal,
      });
      if (response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        throw new UpstreamFailure("upstream_protocol_error", `${host} answered ${response.status}: the OAuth flow follows no redirects`);
      }
      return new Response(await boundedBody(response, host), { status: response.status, headers: response.headers });
    } catch (error) {
      if (error instanceof UpstreamFailure) throw error;
      if (deadline.aborted) {
        throw new UpstreamFailure("upstream_unreachable", `${host} did not answer within ${OAUTH_REQUEST_TIMEOUT_MS / 1000} s`);
      }
      throw new UpstreamFailure("upstream_unreachable", `Could not reach ${host}: ${(error as Error).message}`);
    }
  };
}

const hostOf = (url: string) => URL.parse(url)?.host ?? "not a URL";

async function boundedBody(response: Response, host: string): Promise<Uint8Array> {
  const tooLarge = () => new UpstreamFailure("upstream_response_too_large", `${host} answered more than ${MAX_OAUTH_RESPONSE_BYTES} bytes`);
  const declared = Number(response.headers.get("content-length") ?? "0");
  if (declared > MAX_OAUTH_RESPONSE_BYTES && !response.headers.get("content-encoding")) {
    await response.body?.cancel();
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let received = 0;
  if (!response.body) return new Uint8Array();
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.byteLength;
    if (received > MAX_OAUTH_RESPONSE_BYTES) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return joinBytes(chunks);
}

/**
 * The options oauth4webapi's requests take: the guarded fetch, and plain http
 * allowed, since the URL policy above already decides which hosts may use it
 * (only the dev allow-list), more strictly than the library's https check.
 */
export function oauthRequestOptions<Method extends string, Body>(allowList: ReadonlySet<string>): HttpRequestOptions<Method, Body> {
  const guarded = guardedOAuthFetch(allowList);
  return {
    [customFetch]: (url: string, options: CustomFetchOptions<Method, Body>) => guarded(url, options),
    [allowInsecureRequests]: true,
  };
}
