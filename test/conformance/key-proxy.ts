// The small loopback proxy between the conformance suite and the gateway: the suite's client sends
// no custom headers, so this adds the client key; and the suite uses fixed names, so this maps them
// to the gateway's and back, in requests and in answers (JSON or SSE), as a client configured with
// the gateway's names would see them:
//   tools     `test_simple_text`   ⇄ `ref__test_simple_text` (or `schemas__…`: from the gateway's tool list)
//   prompts   `test_simple_prompt` ⇄ `ref__test_simple_prompt`
//   resources `test://static-text` ⇄ `rayrun://ref/test://static-text` (every `uri` and `uriTemplate`)
// Everything else, Host and Origin included, is forwarded as it came, so the DNS-rebinding scenario
// still tests the gateway.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface NameMap {
  /** Suite tool name → gateway name (`test_simple_text` → `ref__test_simple_text`). */
  toGateway: Map<string, string>;
  /** Gateway tool name → suite name. */
  toSuite: Map<string, string>;
  /** The service whose prompts and resources the suite reads (the fixture's reference server). */
  contentService: string;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type JsonObject = { [key: string]: Json };

const isObject = (value: Json | undefined): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value);

/** Both directions of the prompt and resource mapping for one service. */
function contentNames(slug: string) {
  const promptPrefix = `${slug}__`;
  const uriPrefix = `rayrun://${slug}/`;
  return {
    promptToGateway: (name: string) => `${promptPrefix}${name}`,
    promptToSuite: (name: string) => (name.startsWith(promptPrefix) ? name.slice(promptPrefix.length) : name),
    uriToGateway: (uri: string) => `${uriPrefix}${uri}`,
    uriToSuite: (uri: string) => (uri.startsWith(uriPrefix) ? uri.slice(uriPrefix.length) : uri),
  };
}

/** The tool, prompt or resource URI one request's body names (what Mcp-Name repeats), if it names one. */
function targetName(text: string): { from: string } | null {
  try {
    const message = JSON.parse(text) as Json;
    if (!isObject(message) || !isObject(message.params)) return null;
    const value = message.params.name ?? message.params.uri;
    return typeof value === "string" ? { from: value } : null;
  } catch {
    return null;
  }
}

/** A client message with the tool, prompt or resource it names renamed to the gateway's name. */
function toGateway(message: JsonObject, names: NameMap): JsonObject {
  const params = message.params;
  if (!isObject(params)) return message;
  const content = contentNames(names.contentService);
  const renamed = { ...params };
  switch (message.method) {
    case "tools/call":
      if (typeof params.name === "string") renamed.name = names.toGateway.get(params.name) ?? params.name;
      break;
    case "prompts/get":
      if (typeof params.name === "string") renamed.name = content.promptToGateway(params.name);
      break;
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      if (typeof params.uri === "string") renamed.uri = content.uriToGateway(params.uri);
      break;
    case "completion/complete": {
      const ref = params.ref;
      if (!isObject(ref)) break;
      if (ref.type === "ref/prompt" && typeof ref.name === "string") renamed.ref = { ...ref, name: content.promptToGateway(ref.name) };
      if (ref.type === "ref/resource" && typeof ref.uri === "string") renamed.ref = { ...ref, uri: content.uriToGateway(ref.uri) };
      break;
    }
    default:
      return message;
  }
  return { ...message, params: renamed };
}

/** Every `uri` and `uriTemplate` in a value (contents, links, embedded resources, listings) back to the suite's. */
function urisToSuite(value: Json, uriToSuite: (uri: string) => string): Json {
  if (Array.isArray(value)) return value.map((item) => urisToSuite(item, uriToSuite));
  if (!isObject(value)) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key,
      (key === "uri" || key === "uriTemplate") && typeof item === "string" ? uriToSuite(item) : urisToSuite(item, uriToSuite),
    ]),
  );
}

/** A gateway message with listed tool and prompt names and every resource URI renamed to the suite's. */
function toSuite(message: JsonObject, names: NameMap): JsonObject {
  const content = contentNames(names.contentService);
  // Server-to-client requests (sampling, elicitation) carry params; answers carry a result.
  const mapped = urisToSuite(message, content.uriToSuite) as JsonObject;
  const result = mapped.result;
  if (!isObject(result)) return mapped;
  const { tools, prompts } = result;
  const renamedResult = { ...result };
  if (Array.isArray(tools)) {
    renamedResult.tools = tools.map((tool) =>
      isObject(tool) && typeof tool.name === "string" ? { ...tool, name: names.toSuite.get(tool.name) ?? tool.name } : tool,
    );
  }
  if (Array.isArray(prompts)) {
    renamedResult.prompts = prompts.map((prompt) =>
      isObject(prompt) && typeof prompt.name === "string" ? { ...prompt, name: content.promptToSuite(prompt.name) } : prompt,
    );
  }
  return { ...mapped, result: renamedResult };
}

function mapJson(text: string, map: (message: JsonObject) => JsonObject): string {
  try {
    const parsed = JSON.parse(text) as Json;
    const each = (message: Json) => (isObject(message) ? map(message) : message);
    return JSON.stringify(Array.isArray(parsed) ? parsed.map(each) : each(parsed));
  } catch {
    return text;
  }
}

async function readAll(stream: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

export async function startKeyProxy(
  gatewayOrigin: string,
  clientKey: string,
  names: NameMap,
): Promise<{ url: string; close(): Promise<void> }> {
  const target = new URL(gatewayOrigin);
  const server: Server = createServer((req, res) => {
    (async () => {
      const inbound = await readAll(req);
      const body = inbound ? mapJson(inbound, (message) => toGateway(message, names)) : "";
      // No compression between proxy and gateway: the proxy rewrites bodies as text.
      const { "transfer-encoding": _chunked, "accept-encoding": _compression, ...inboundHeaders } = req.headers;
      const headers: Record<string, string | string[] | undefined> = { ...inboundHeaders, authorization: `Bearer ${clientKey}` };
      // 2026-07-28's Mcp-Name repeats the body's name: renamed with it when it agreed with the body, left as it came
      // when it did not (the header-validation scenarios send one that disagrees on purpose).
      const named = inbound ? targetName(inbound) : null;
      if (named && headers["mcp-name"] === named.from) headers["mcp-name"] = targetName(body)?.from ?? named.from;
      if (inbound) headers["content-length"] = String(Buffer.byteLength(body));
      const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
        // The answer is cut short whenever the suite closes its end first (res "close" destroys the upstream
        // request, and the answer then fails with "aborted"): pass the cut on instead of letting it throw.
        answer.on("error", () => res.destroy());
        const type = answer.headers["content-type"] ?? "";
        if (type.startsWith("application/json")) {
          readAll(answer).then(
            (text) => {
              const mapped = mapJson(text, (message) => toSuite(message, names));
              const { "transfer-encoding": _chunked, ...headers } = answer.headers;
              res.writeHead(answer.statusCode ?? 502, { ...headers, "content-length": String(Buffer.byteLength(mapped)) });
              res.end(mapped);
            },
            () => res.destroy(),
          );
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!type.startsWith("text/event-stream")) return void answer.pipe(res);
        // SSE: each `data:` line is one JSON-RPC message; rename line by line as they stream.
        let pending = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => {
          pending += chunk;
          const lines = pending.split("\n");
          pending = lines.pop() ?? "";
          for (const line of lines) {
            res.write(
              line.startsWith("data:") ? `data: ${mapJson(line.slice(5).trim(), (message) => toSuite(message, names))}\n` : `${line}\n`,
            );
          }
        });
        answer.on("end", () => res.end(pending));
      });
      upstream.on("error", (error) => {
        if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
        res.end(String(error));
      });
      res.on("close", () => upstream.destroy());
      upstream.end(body || undefined);
    })().catch((error: unknown) => {
      console.error("key proxy:", error);
      if (!res.headersSent) res.writeHead(502, { "content-type": "text/plain" });
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}
