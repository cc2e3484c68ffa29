// The small loopback proxy between the conformance suite and the gateway: the suite's client sends
// no custom headers, so this adds the client key; and the suite calls fixed tool names, so this maps
// them to the gateway's `{service}__{tool}` names and back. Everything else, Host and Origin
// included, is forwarded as it came, so the DNS-rebinding scenario still tests the gateway.
import { createServer, request as httpRequest, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface NameMap {
  /** Suite name → gateway name (`test_simple_text` → `ref__test_simple_text`). */
  toGateway: Map<string, string>;
  /** Gateway name → suite name. */
  toSuite: Map<string, string>;
}

type Message = { method?: unknown; params?: { name?: unknown }; result?: { tools?: { name: string }[] } };

/** A client message with the tool it calls renamed to the gateway's name. */
function renameCall(message: Message, names: NameMap): Message {
  const name = message.params?.name;
  if (message.method !== "tools/call" || typeof name !== "string" || !names.toGateway.has(name)) return message;
  return { ...message, params: { ...message.params, name: names.toGateway.get(name) } };
}

/** A gateway answer with listed tools renamed to the suite's names. */
function renameListing(message: Message, names: NameMap): Message {
  const tools = message.result?.tools;
  if (!Array.isArray(tools)) return message;
  return {
    ...message,
    result: { ...message.result, tools: tools.map((tool) => ({ ...tool, name: names.toSuite.get(tool.name) ?? tool.name })) },
  };
}

function mapJson(text: string, map: (message: Message) => Message): string {
  try {
    const parsed = JSON.parse(text) as Message | Message[];
    return JSON.stringify(Array.isArray(parsed) ? parsed.map(map) : map(parsed));
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
      const body = inbound ? mapJson(inbound, (message) => renameCall(message, names)) : "";
      // No compression between proxy and gateway: the proxy rewrites bodies as text.
      const { "transfer-encoding": _chunked, "accept-encoding": _compression, ...inboundHeaders } = req.headers;
      const headers = { ...inboundHeaders, authorization: `Bearer ${clientKey}` };
      if (inbound) headers["content-length"] = String(Buffer.byteLength(body));
      const upstream = httpRequest({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers }, (answer) => {
        const type = answer.headers["content-type"] ?? "";
        if (type.startsWith("application/json")) {
          void readAll(answer).then((text) => {
            const mapped = mapJson(text, (message) => renameListing(message, names));
            const { "transfer-encoding": _chunked, ...headers } = answer.headers;
            res.writeHead(answer.statusCode ?? 502, { ...headers, "content-length": String(Buffer.byteLength(mapped)) });
            res.end(mapped);
          });
          return;
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!type.startsWith("text/event-stream")) return void answer.pipe(res);
        // SSE: each `data:` line is one JSON-RPC message; rename listings line by line as they stream.
        let pending = "";
        answer.setEncoding("utf8");
        answer.on("data", (chunk: string) => {
          pending += chunk;
          const lines = pending.split("\n");
          pending = lines.pop() ?? "";
          for (const line of lines) {
            res.write(
              line.startsWith("data:")
                ? `data: ${mapJson(line.slice(5).trim(), (message) => renameListing(message, names))}\n`
                : `${line}\n`,
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
