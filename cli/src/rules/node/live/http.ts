// A declared HTTP tool (or connector operation) executed: the request its templates
// make from the input, sent with fetch under the tool's timeout signal, the response
// read up to max_bytes, then parsed. Nothing is sent before the input and every
// variable the request reads have been checked.
import { interpolateEnv, envNames } from "../../core/env.ts";
import type { ToolInput } from "../../core/events.ts";
import type { HttpTool } from "../../core/live/config.ts";
import { LiveToolError } from "../../core/live/errors.ts";
import { matchedItems, parsePage, patternRun, type Page } from "../../core/live/parse.ts";
import type { LiveCall, LiveExecutor } from "../../core/live/table.ts";
import { fillJson, fillLimit, fillQuery, fillUrl } from "../../core/live/template.ts";
import { matchesOffThread } from "./pattern-thread.ts";
import { fetchPublicOnly, PrivateAddressError, privateAddressOf } from "./private-address.ts";

export function httpExecutor(tool: HttpTool, env: Readonly<Record<string, string | undefined>>, allowPrivate = false): LiveExecutor {
  const { request, name } = tool;
  const read = (variable: string) => {
    const value = env[variable];
    if (value === undefined || value === "")
      throw new LiveToolError("live_env_missing", `${name}: ${variable} is not set (no request was made)`);
    return value;
  };
  return async (input, call) => {
    const limit = fillLimit(name, request.limit, input);
    const url = fillUrl(name, request.url, input, fillQuery(request.query, input));
    const headers: Record<string, string> = {};
    for (const [header, value] of Object.entries(request.headers)) {
      for (const variable of envNames(value)) read(variable);
      headers[header.toLowerCase()] = interpolateEnv(value, env);
    }
    const { auth } = request;
    if (auth?.type === "header") headers[auth.name.toLowerCase()] = read(auth.env);
    if (auth?.type === "bearer") headers.authorization = `Bearer ${read(auth.env)}`;
    if (auth?.type === "query") url.searchParams.set(auth.name, read(auth.env));
    const body = requestBody(request.body, input, headers);
    // The URL as recorded; a query key in it is redacted from the line with every other secret.
    call.request = { method: request.method, url: url.href };
    // Where the input chose the origin, the agent's own machine and network are off limits unless the file says so.
    const guard = request.url.fixedOrigin === undefined && !allowPrivate;
    const { response, where } = await follow(name, request.url.fixedOrigin, guard, { method: request.method, url, headers, body }, call);
    const page = await readPage(response, response.url || call.request.url, tool.max_bytes);
    call.truncated = page.truncated;
    // A fetched page is returned whatever its status (the text shape carries it); a search or an API must answer 2xx.
    if (!response.ok && request.parse.mode !== "text")
      throw new LiveToolError("live_http_status", `${name}: ${where} answered ${response.status}: ${page.body.slice(0, 200)}`);
    if (request.parse.mode === "regex") {
      const run = patternRun(page, limit);
      const found = await matchesOffThread(request.parse.pattern, run.text, run.most, call.signal);
      call.truncated = page.truncated || run.cut;
      return matchedItems(found, request.parse.fields, page.url);
    }
    const { result, truncated } = parsePage(name, request.parse, page, limit);
    call.truncated = truncated;
    return result;
  };
}

/** Redirects one call follows; every hop is checked as the first URL was. */
export const MAX_REDIRECTS = 5;

interface Hop {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body: string | undefined;
}

/**
 * Sends the request and follows redirects by hand. fetch would follow them itself, forwarding every header but
 * `authorization` and `cookie` to any origin: an API key header from allowed_env would reach whoever the server
 * redirects to. So a hop must be http(s), stay on the origin the template fixes (when it fixes one), and a hop to
 * another origin (a `{url}` tool's) leaves every header the file set behind. The record names the last URL asked.
 */
async function follow(
  name: string,
  fixedOrigin: string | undefined,
  guardPrivate: boolean,
  first: Hop,
  call: LiveCall,
): Promise<{ response: Response; where: string }> {
  let hop = first;
  for (let redirects = 0; ; redirects++) {
    const where = `${hop.method} ${hop.url.origin}${hop.url.pathname}`;
    const privateAddress = guardPrivate ? await privateAddressOf(hop.url) : null;
    if (privateAddress !== null) throw refusedPrivate(name, hop.url, privateAddress);
    let response: Response;
    try {
      response = guardPrivate
        ? await fetchPublicOnly(hop.url, { ...hop, signal: call.signal })
        : await fetch(hop.url.href, requestInit(hop, call.signal));
    } catch (error) {
      if (error instanceof PrivateAddressError) throw refusedPrivate(name, hop.url, error.address);
      const failure = error as { code?: string; message: string; cause?: { code?: string; message?: string } };
      const reason = failure.cause?.code ?? failure.cause?.message ?? failure.code ?? failure.message;
      throw new LiveToolError("live_unreachable", `${name}: ${where} failed: ${reason}`);
    }
    const location = REDIRECTS.has(response.status) ? response.headers.get("location") : null;
    if (location === null) return { response, where };
    await response.body?.cancel();
    if (redirects === MAX_REDIRECTS)
      throw new LiveToolError("live_url_refused", `${name}: ${where} redirected more than ${MAX_REDIRECTS} times`);
    const next = parsedUrl(location, hop.url);
    if (!next || (next.protocol !== "http:" && next.protocol !== "https:"))
      throw new LiveToolError("live_url_refused", `${name}: ${where} redirected to a URL that is not http(s)`);
    if (fixedOrigin !== undefined && next.origin !== fixedOrigin)
      throw new LiveToolError(
        "live_url_refused",
        `${name}: ${where} redirected to ${next.origin}, off the template's origin ${fixedOrigin}`,
      );
    // 303, and 301/302 after a POST, turn into a GET without the body, as browsers do; 307 and 308 repeat the request.
    const asGet = response.status === 303 || ((response.status === 301 || response.status === 302) && hop.method === "POST");
    const headers = next.origin === hop.url.origin ? { ...hop.headers } : {};
    if (asGet) delete headers["content-type"];
    hop = { method: asGet ? "GET" : hop.method, url: next, headers, body: asGet ? undefined : hop.body };
    call.request = { method: hop.method, url: next.href };
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);

function refusedPrivate(name: string, url: URL, address: string): LiveToolError {
  return new LiveToolError(
    "live_url_refused",
    `${name}: ${url.origin} is a private, loopback or link-local address (${address}); [live].allow_private lets a tool whose input names the URL reach one`,
  );
}

/** fetch's options for a hop: only those the request has (each one fetch is given costs it work on every call). */
function requestInit(hop: Hop, signal: AbortSignal): RequestInit {
  const init: RequestInit = { signal, redirect: "manual" };
  if (hop.method !== "GET") init.method = hop.method;
  if (Object.keys(hop.headers).length > 0) init.headers = hop.headers;
  if (hop.body !== undefined) init.body = hop.body;
  return init;
}

/** `URL.parse` is Node 22's; the CLI runs on Node 20. */
function parsedUrl(text: string, base: URL): URL | null {
  try {
    return new URL(text, base);
  } catch {
    return null;
  }
}

function requestBody(template: unknown, input: ToolInput, headers: Record<string, string>): string | undefined {
  if (template === undefined) return undefined;
  const filled = fillJson(template, input);
  if (typeof filled === "string") {
    headers["content-type"] ??= "text/plain;charset=utf-8";
    return filled;
  }
  headers["content-type"] ??= "application/json";
  return JSON.stringify(filled);
}

/** The body up to `maxBytes`; past it the rest is not read (the stream is cancelled) and the page says it was cut. */
async function readPage(response: Response, requested: string, maxBytes: number): Promise<Page> {
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  if (response.body) {
    const reader = response.body.getReader();
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      if (size + value.byteLength > maxBytes) {
        chunks.push(value.subarray(0, maxBytes - size));
        size = maxBytes;
        truncated = true;
        await reader.cancel();
        break;
      }
      chunks.push(value);
      size += value.byteLength;
    }
  }
  return {
    url: response.url || requested,
    status: response.status,
    contentType: response.headers.get("content-type") ?? "",
    // A multi-byte character cut at the bound decodes as U+FFFD rather than failing.
    body: utf8.decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks)),
    truncated,
  };
}

/** Decodes whole bodies (no `stream` option), so one decoder serves every call. */
const utf8 = new TextDecoder();
