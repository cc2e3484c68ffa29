import { SELF } from "cloudflare:test";
import { inject } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import type { ReceivedCall } from "../demo/upstream/tools.ts";
import type { ReceivedRequest } from "../demo/upstream/http.ts";

export const ORIGIN = "https://rayrun.test";
export const BOOTSTRAP_SECRET = "test-bootstrap-secret";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** One request to the gateway, as a client would send it. */
export async function api<T = any>(
  path: string,
  options: { method?: string; key?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {},
): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  let body: string | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["content-type"] ??= "application/json";
  } else if (body !== undefined) {
    headers["content-type"] ??= "application/json";
  }
  const response = await SELF.fetch(`${ORIGIN}${path}`, { method: options.method ?? (body ? "POST" : "GET"), headers, body });
  const text = await response.text();
  // JSON bodies are parsed; anything else (JSON lines, HTML) stays text.
  const isJson = (response.headers.get("content-type") ?? "").startsWith("application/json");
  const parsed: unknown = isJson && text ? JSON.parse(text) : text || null;
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/**
 * What the console's browser adds to every request it sends (fetch from the console's page, a form on the gateway's
 * own page): a request authenticated by the session cookie is refused `csrf_refused` without one of them.
 */
export const CONSOLE_HEADERS = { origin: ORIGIN, "sec-fetch-site": "same-origin" } as const;

/** Signs an existing member in through the dev login, as the console does; returns the session cookie (`name=value`). */
export async function devLogin(email: string): Promise<string> {
  const login = await api("/dev/login", { body: { email }, headers: CONSOLE_HEADERS });
  if (login.status !== 200) throw new Error(`dev login: ${login.status} ${JSON.stringify(login.body)}`);
  return login.headers.get("set-cookie")!.split(";")[0]!;
}

export interface TestWorkspace {
  ws: string;
  adminKey: string;
  defaultProfileId: string;
}

export async function createWorkspace(name = "Test workspace", adminEmail?: string): Promise<TestWorkspace> {
  const res = await api("/v1/workspaces", {
    key: undefined,
    body: { name, adminEmail },
    headers: { authorization: `Bearer ${BOOTSTRAP_SECRET}` },
  });
  if (res.status !== 201) throw new Error(`workspace creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return { ws: res.body.workspace.id, adminKey: res.body.adminKey.secret, defaultProfileId: res.body.defaultProfileId };
}

export async function createKey(workspace: TestWorkspace, scopes: string[], profileId?: string): Promise<string> {
  const res = await api(`/v1/workspaces/${workspace.ws}/keys`, {
    key: workspace.adminKey,
    body: { name: `key ${scopes.join(" ")}`, scopes, profileId },
  });
  if (res.status !== 201) throw new Error(`key creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.secret;
}

/** A key named `name` made with the `maker` key (tools:call keys in the default profile): its id and secret. */
export async function makeKey(workspace: TestWorkspace, maker: string, name: string, scopes: string[]) {
  const made = await api(`/v1/workspaces/${workspace.ws}/keys`, {
    key: maker,
    body: { name, scopes, ...(scopes.includes("tools:call") ? { profileId: workspace.defaultProfileId } : {}) },
  });
  if (made.status !== 201) throw new Error(`key: ${made.status} ${JSON.stringify(made.body)}`);
  return { id: made.body.key.id as string, secret: made.body.secret as string };
}

/** A unique tag per test, so the shared demo upstream shows each test only its own calls. */
export const newTag = () => crypto.randomUUID().slice(0, 8);

export const upstreamOrigin = () => inject("upstreamOrigin");
export const demoUpstreamUrl = (tag: string) => `${upstreamOrigin()}/t/${tag}/mcp`;

/** What the demo upstream received for a tag: tool calls and every JSON-RPC message with headers. */
export async function upstreamReceived(tag: string): Promise<{ calls: ReceivedCall[]; methods: ReceivedRequest[] }> {
  const res = await fetch(`${upstreamOrigin()}/__calls?tag=${encodeURIComponent(tag)}`);
  return (await res.json()) as { calls: ReceivedCall[]; methods: ReceivedRequest[] };
}

export async function addService(workspace: TestWorkspace, body: { slug: string; url: string; headers?: Record<string, string> }) {
  const res = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body });
  if (res.status !== 201) throw new Error(`service creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body as { service: { id: string; slug: string }; index: { added: string[] } };
}

/** A workspace with one of the demo upstream's fixtures (`/fixtures/<fixture>/mcp`) as service `slug`, and a client over /mcp. */
export async function fixtureGateway(slug: string, fixture: string) {
  const workspace = await createWorkspace();
  const created = await addService(workspace, { slug, url: `${upstreamOrigin()}/fixtures/${fixture}/mcp` });
  const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
  return { ...workspace, created, client };
}

/** A workspace with the demo upstream connected as service `demo` and a client key in the default profile. */
export async function demoGateway(headers?: Record<string, string>) {
  const workspace = await createWorkspace();
  const tag = newTag();
  const { service } = await addService(workspace, { slug: "demo", url: demoUpstreamUrl(tag), headers });
  const clientKey = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
  const tools = (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools as {
    uid: string;
    name: string;
    publicName: string;
    definitionHash: string;
  }[];
  const toolUid = (name: string) => tools.find((tool) => tool.name === name)!.uid;
  return { ...workspace, tag, service, clientKey, tools, toolUid };
}

/** The official MCP SDK client, connected to the gateway's /mcp over Streamable HTTP. */
export async function connectMcp(key: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: (input, init) => SELF.fetch(input as string, init),
    requestInit: { headers: { authorization: `Bearer ${key}` } },
  });
  const client = new Client({ name: "rayrun-test-agent", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  await client.connect(transport);
  return client;
}

/**
 * Shadow runs and log writes finish after the response, and call rows arrive through the queue in batches
 * (up to `max_batch_timeout`, 1 s, after the call); wait for them as a client would. The deadline is generous
 * because a loaded machine stretches the queue's delivery, not because delivery is slow.
 */
export async function eventually<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** The gateway's error in a tool result (`_meta["dev.rayrun/error"]`: code, message, details), if it holds one. */
export const gatewayError = (result: { _meta?: unknown }) => (result._meta as Record<string, any> | undefined)?.["dev.rayrun/error"];

/**
 * A workspace with the demo upstream's hostile fixture (`/fixtures/hostile/<tag>/mcp`) connected as service
 * `evil`, and a tools:call key on its default profile.
 */
export async function hostileGateway() {
  const tag = newTag();
  const workspace = await createWorkspace();
  const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
    key: workspace.adminKey,
    body: { slug: "evil", url: `${upstreamOrigin()}/fixtures/hostile/${tag}/mcp` },
  });
  if (created.status !== 201) throw new Error(`service: ${created.status} ${JSON.stringify(created.body)}`);
  return { ...workspace, tag, key: await createKey(workspace, ["tools:call"], workspace.defaultProfileId) };
}
