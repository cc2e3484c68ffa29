// A declared HTTP tool (or connector operation) executed: the request its templates
// make from the input, sent with fetch under the tool's timeout signal, the response
// read up to max_bytes, then parsed. Nothing is sent before the input and every
// variable the request reads have been checked.
import { interpolateEnv, envNames } from "../../core/env.ts";
import type { ToolInput } from "../../core/events.ts";
import type { HttpTool } from "../../core/live/config.ts";
import { LiveToolError } from "../../core/live/errors.ts";
import { parsePage, type Page } from "../../core/live/parse.ts";
import type { LiveExecutor } from "../../core/live/table.ts";
import { fillJson, fillLimit, fillQuery, fillUrl } from "../../core/live/template.ts";

export function httpExecutor(tool: HttpTool, env: Readonly<Record<string, string | undefined>>): LiveExecutor {
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
    const where = `${request.method} ${url.origin}${url.pathname}`;
    let response: Response;
    try {
      response = await fetch(url, { method: request.method, headers, body, signal: call.signal });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new LiveToolError("live_unreachable", `${name}: ${where} failed: ${cause?.code ?? cause?.message ?? (error as Error).message}`);
    }
    const page = await readPage(response, url.href, tool.max_bytes);
    call.truncated = page.truncated;
    // A fetched page is returned whatever its status (the text shape carries it); a search or an API must answer 2xx.
    if (!response.ok && request.parse.mode !== "text")
      throw new LiveToolError("live_http_status", `${name}: ${where} answered ${response.status}: ${page.body.slice(0, 200)}`);
    const { result, truncated } = parsePage(name, request.parse, page, limit);
    call.truncated = truncated;
    return result;
  };
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
    body: new TextDecoder().decode(Buffer.concat(chunks)),
    truncated,
  };
}
