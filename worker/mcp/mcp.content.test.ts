import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { McpError } from "@modelcontextprotocol/sdk/types.js";
import { addService, api, connectMcp, createKey, createWorkspace, demoGateway, eventually, upstreamOrigin } from "../../test/helpers.ts";

const DEMO_INSTRUCTIONS =
  "Release notes and customer records of the demo product. Search release notes before answering product questions.";
const RICH_INSTRUCTIONS = "Files of the rich fixture. Read file:///readme.md first.";

/** The JSON-RPC error a client request failed with. */
async function rpcError(request: Promise<unknown>): Promise<McpError> {
  const error = await request.then(
    () => null,
    (thrown: unknown) => thrown,
  );
  if (!(error instanceof McpError)) throw new Error(`expected a JSON-RPC error, got ${String(error)}`);
  return error;
}

/** The workspace's content call rows (every resources/read and prompts/get, whatever its outcome). */
const contentLogs = (workspaceId: string) =>
  env.DB.prepare(
    "SELECT kind AS method, item, outcome, code, key_id, service_id FROM calls WHERE workspace_id = ? AND kind IN ('resources/read', 'prompts/get') ORDER BY id",
  )
    .bind(workspaceId)
    .all<{ method: string; item: string; outcome: string; code: string | null; key_id: string; service_id: string | null }>()
    .then((rows) => rows.results);

async function setServicePolicy(workspace: { ws: string; adminKey: string }, serviceId: string, body: Record<string, unknown>) {
  return api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/policy`, { method: "PUT", key: workspace.adminKey, body });
}

describe("resources, prompts and completion through the gateway", () => {
  it("lists, reads, fills templates, gets prompts and completes against the demo upstream, namespaced", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    expect(client.getServerCapabilities()).toMatchObject({ resources: {}, prompts: {}, completions: {}, logging: {} });

    const { resources } = await client.listResources();
    expect(resources).toEqual([
      expect.objectContaining({ uri: "rayrun://demo/notes://release/latest", name: "latest_release_note", mimeType: "text/markdown" }),
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((template) => template.uriTemplate)).toEqual(["rayrun://demo/notes://release/{version}"]);

    // A filled gateway template reads back through the right service.
    const read = await client.readResource({ uri: "rayrun://demo/notes://release/2.3.1" });
    expect(read.contents).toEqual([
      {
        uri: "rayrun://demo/notes://release/2.3.1",
        mimeType: "text/markdown",
        text: "# 2.3.1: Billing fix\n\n2026-08-19\n\nInvoices no longer double-count seats.\n",
      },
    ]);

    const { prompts } = await client.listPrompts();
    expect(prompts.map((prompt) => prompt.name)).toEqual(["demo__summarize_release"]);
    const prompt = await client.getPrompt({ name: "demo__summarize_release", arguments: { version: "2.4.0" } });
    expect(prompt.messages.map((message) => message.content)).toEqual([
      { type: "text", text: "Summarize release 2.4.0 for customers in two sentences." },
      { type: "resource_link", uri: "rayrun://demo/notes://release/2.4.0", name: "release_2.4.0" },
    ]);

    const byPrompt = await client.complete({
      ref: { type: "ref/prompt", name: "demo__summarize_release" },
      argument: { name: "version", value: "2.3" },
    });
    expect(byPrompt.completion.values).toEqual(["2.3.1", "2.3.0"]);
    const byTemplate = await client.complete({
      ref: { type: "ref/resource", uri: "rayrun://demo/notes://release/{version}" },
      argument: { name: "version", value: "2.2" },
    });
    expect(byTemplate.completion.values).toEqual(["2.2.0"]);
    await expect(client.setLoggingLevel("warning")).resolves.toEqual({});

    // Each read and get leaves a metadata row with the upstream's own URI or name.
    const rows = await eventually(
      () => contentLogs(gateway.ws),
      (found) => found.length === 2,
    );
    expect(rows.map(({ method, item, outcome, code }) => ({ method, item, outcome, code }))).toEqual([
      { method: "resources/read", item: "notes://release/2.3.1", outcome: "ok", code: null },
      { method: "prompts/get", item: "summarize_release", outcome: "ok", code: null },
    ]);
  });

  it("hides a blocked service's resources and prompts: none listed, reading or getting one answers as unknown", async ({ expect }) => {
    const gateway = await demoGateway();
    const blocked = await setServicePolicy(gateway, gateway.service.id, {
      profileId: gateway.defaultProfileId,
      resources: "block",
      prompts: "block",
    });
    expect(blocked.status).toBe(200);
    expect(blocked.body).toMatchObject({
      profileId: gateway.defaultProfileId,
      serviceId: gateway.service.id,
      resources: "block",
      prompts: "block",
    });

    const client = await connectMcp(gateway.clientKey);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);

    const read = await rpcError(client.readResource({ uri: "rayrun://demo/notes://release/latest" }));
    const unknownService = await rpcError(client.readResource({ uri: "rayrun://nosuch/notes://release/latest" }));
    expect(read.code).toBe(-32002);
    expect(read.message).toBe("MCP error -32002: Resource not found: rayrun://demo/notes://release/latest");
    expect(unknownService.code).toBe(-32002);
    expect(unknownService.message).toBe("MCP error -32002: Resource not found: rayrun://nosuch/notes://release/latest");

    const get = await rpcError(client.getPrompt({ name: "demo__summarize_release", arguments: { version: "2.4.0" } }));
    expect([get.code, get.message]).toEqual([-32602, "MCP error -32602: Unknown prompt: demo__summarize_release"]);
    const complete = await rpcError(
      client.complete({ ref: { type: "ref/prompt", name: "demo__summarize_release" }, argument: { name: "version", value: "2" } }),
    );
    expect([complete.code, complete.message]).toEqual([-32602, "MCP error -32602: Unknown prompt: demo__summarize_release"]);

    // Every request is a row, hidden as the client saw it; the blocked service's name it, and nothing reached the upstream.
    const rows = await eventually(
      () => contentLogs(gateway.ws),
      (found) => found.length === 3,
    );
    expect(rows.map((row) => [row.method, row.outcome, row.service_id])).toEqual([
      ["resources/read", "hidden", gateway.service.id],
      ["resources/read", "hidden", null],
      ["prompts/get", "hidden", gateway.service.id],
    ]);

    // Allowing resources again leaves prompts blocked.
    await setServicePolicy(gateway, gateway.service.id, { profileId: gateway.defaultProfileId, resources: "allow" });
    const again = await connectMcp(gateway.clientKey);
    expect((await again.listResources()).resources).toHaveLength(1);
    expect((await again.listPrompts()).prompts).toEqual([]);
  });

  it("blocks resources and prompts for a profile whose default mode is block, until a service policy allows them", async ({ expect }) => {
    const gateway = await demoGateway();
    const profile = await api(`/v1/workspaces/${gateway.ws}/profiles`, {
      key: gateway.adminKey,
      body: { name: "locked", defaultMode: "block" },
    });
    const key = await createKey(gateway, ["tools:call"], profile.body.id);
    const client = await connectMcp(key);
    expect((await client.listResources()).resources).toEqual([]);
    expect((await client.listPrompts()).prompts).toEqual([]);

    const allowed = await setServicePolicy(gateway, gateway.service.id, { profileId: profile.body.id, prompts: "allow" });
    // The kind left out takes the profile default's mode on the first write.
    expect(allowed.body).toMatchObject({ resources: "block", prompts: "allow" });
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual(["demo__summarize_release"]);
    expect((await client.listResources()).resources).toEqual([]);
    const policies = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/policies`, { key: gateway.adminKey });
    expect(policies.body.policies).toEqual([expect.objectContaining({ profileId: profile.body.id, resources: "block", prompts: "allow" })]);
  });

  it("refuses a service policy without a mode, for an unknown profile, or for an unknown service", async ({ expect }) => {
    const gateway = await demoGateway();
    const empty = await setServicePolicy(gateway, gateway.service.id, { profileId: gateway.defaultProfileId });
    expect([empty.status, empty.body.error.code]).toEqual([400, "invalid_request"]);
    const noProfile = await setServicePolicy(gateway, gateway.service.id, { profileId: "prof_nope", prompts: "block" });
    expect([noProfile.status, noProfile.body.error.code]).toEqual([404, "not_found"]);
    const noService = await setServicePolicy(gateway, "svc_nope", { profileId: gateway.defaultProfileId, prompts: "block" });
    expect([noService.status, noService.body.error.code]).toEqual([404, "not_found"]);
  });

  it("answers a URI that is not the gateway's with a precise invalid-params error", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    for (const uri of ["notes://release/latest", "rayrun://demo", "rayrun://Demo/notes://x", "rayrun://demo/"]) {
      const error = await rpcError(client.readResource({ uri }));
      expect([error.code, error.message, error.data]).toEqual([
        -32602,
        `MCP error -32602: Not a resource URI of this gateway: ${uri}; expected rayrun://{service}/{upstream URI}`,
        { code: "resource_uri_malformed" },
      ]);
    }
    const cursor = await rpcError(client.listResources({ cursor: "not-a-cursor" }));
    expect([cursor.code, cursor.data]).toEqual([-32602, { code: "invalid_cursor" }]);
  });

  it("maps a tool's resource link and embedded resource to gateway URIs that read back under the same policy", async ({ expect }) => {
    const workspace = await createWorkspace();
    const { service } = await addService(workspace, { slug: "rich", url: `${upstreamOrigin()}/fixtures/rich/mcp` });
    const key = await createKey(workspace, ["tools:call"], workspace.defaultProfileId);
    const client = await connectMcp(key);
    const result = await client.callTool({ name: "rich__find_file", arguments: { name: "a.txt" } });
    expect(result.content).toEqual([
      { type: "resource_link", uri: "rayrun://rich/file:///a.txt", name: "a.txt", mimeType: "text/plain" },
      { type: "resource", resource: { uri: "rayrun://rich/file:///a.txt", text: "contents of a.txt" } },
    ]);
    const link = (result.content as { uri?: string }[])[0]!.uri!;
    expect((await client.readResource({ uri: link })).contents).toEqual([
      { uri: "rayrun://rich/file:///a.txt", mimeType: "text/plain", text: "contents of a.txt" },
    ]);
    // An upstream without completion support has no suggestions.
    const none = await client.complete({ ref: { type: "ref/prompt", name: "rich__review_file" }, argument: { name: "name", value: "a" } });
    expect(none.completion).toEqual({ values: [], hasMore: false });

    await setServicePolicy(workspace, service.id, { profileId: workspace.defaultProfileId, resources: "block" });
    const error = await rpcError(client.readResource({ uri: link }));
    expect(error.code).toBe(-32002);
  });

  it("merges lists over two services page by page, resuming inside a service with its own cursor", async ({ expect }) => {
    const gateway = await demoGateway();
    await addService(gateway, { slug: "many", url: `${upstreamOrigin()}/fixtures/resources/12/mcp` });
    const client = await connectMcp(gateway.clientKey);
    const first = await client.listResources();
    // One upstream request for demo, then nine pages of `many`: the page stops at 10 upstream requests.
    expect(first.resources.map((resource) => resource.uri)).toEqual([
      "rayrun://demo/notes://release/latest",
      ...Array.from({ length: 9 }, (_, i) => `rayrun://many/mem://item/00${i}`),
    ]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(second.resources.map((resource) => resource.uri)).toEqual([
      "rayrun://many/mem://item/009",
      "rayrun://many/mem://item/010",
      "rayrun://many/mem://item/011",
    ]);
    expect(second.nextCursor).toBeUndefined();
  });

  it("skips a service whose one list page is over 1,000 items, names it, and still lists the others", async ({ expect }) => {
    const gateway = await demoGateway();
    await addService(gateway, { slug: "huge", url: `${upstreamOrigin()}/fixtures/resources-one-page/1001/mcp` });
    const client = await connectMcp(gateway.clientKey);
    const page = await client.listResources();
    expect(page.resources.map((resource) => resource.uri)).toEqual(["rayrun://demo/notes://release/latest"]);
    expect(page._meta).toEqual({
      "dev.rayrun/skipped": [
        { service: "huge", code: "upstream_list_too_large", message: "One list page of the upstream is over 1000 items or 2097152 bytes" },
      ],
    });
  });
});

describe("bounds of a merged list page", () => {
  it("stops asking upstreams once a page holds 100 items; the cursor resumes inside the service", async ({ expect }) => {
    const workspace = await createWorkspace();
    // 300 resources, 40 per upstream page: without the bound one merged page would take 10 upstream pages (300 items).
    await addService(workspace, { slug: "paged", url: `${upstreamOrigin()}/fixtures/content-pages/300/40/0/mcp` });
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const uris = (page: { resources: { uri: string }[] }) => page.resources.map((resource) => resource.uri);
    const item = (index: number) => `rayrun://paged/mem://item/${String(index).padStart(3, "0")}`;
    const first = await client.listResources();
    expect(uris(first)).toEqual(Array.from({ length: 120 }, (_, i) => item(i)));
    const second = await client.listResources({ cursor: first.nextCursor });
    expect(uris(second)).toEqual(Array.from({ length: 120 }, (_, i) => item(120 + i)));
    const third = await client.listResources({ cursor: second.nextCursor });
    expect(uris(third)).toEqual(Array.from({ length: 60 }, (_, i) => item(240 + i)));
    expect(third.nextCursor).toBeUndefined();
  });

  it("stops asking upstreams once a page holds 1 MiB of items", async ({ expect }) => {
    const workspace = await createWorkspace();
    // 40 prompts of 100 KiB each, 4 per upstream page: the third page takes the merged page past 1 MiB.
    await addService(workspace, { slug: "fat", url: `${upstreamOrigin()}/fixtures/content-pages/40/4/102400/mcp` });
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const names = (page: { prompts: { name: string }[] }) => page.prompts.map((prompt) => prompt.name);
    const prompt = (index: number) => `fat__prompt_${String(index).padStart(3, "0")}`;
    const first = await client.listPrompts();
    expect(names(first)).toEqual(Array.from({ length: 12 }, (_, i) => prompt(i)));
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await client.listPrompts({ cursor: first.nextCursor });
    expect(names(second)).toEqual(Array.from({ length: 12 }, (_, i) => prompt(12 + i)));
  });
});

describe("definitions and instructions", () => {
  it("leaves out the instructions of services past 32 Ki characters in all, naming them with instructions_limit", async ({ expect }) => {
    const workspace = await createWorkspace();
    // Each service's instructions are cut to 4,096 characters: eight fill 32 Ki exactly, the ninth (slug order) is left out.
    const slugs = ["long-a", "long-b", "long-c", "long-d", "long-e", "long-f", "long-g", "long-h", "long-i"];
    for (const slug of slugs) await addService(workspace, { slug, url: `${upstreamOrigin()}/fixtures/long-instructions/mcp` });
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const instructions = client.getInstructions()!;
    for (const slug of slugs.slice(0, 8)) expect(instructions).toContain(`## Service \`${slug}\`\n\n${"i".repeat(4095)}…`);
    expect(instructions).not.toContain("## Service `long-i`");
    expect(instructions.endsWith("(Instructions of `long-i` left out: instructions_limit.)")).toBe(true);
  });

  it("cuts one service's instructions at 4,096 characters and says so in the index summary", async ({ expect }) => {
    const workspace = await createWorkspace();
    const created = await addService(workspace, { slug: "long", url: `${upstreamOrigin()}/fixtures/long-instructions/mcp` });
    expect((created as { index: Record<string, unknown> }).index.instructionsTruncated).toBe(true);
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    expect(client.getInstructions()).toContain(`## Service \`long\`\n\n${"i".repeat(4095)}…`);
    expect(client.getInstructions()).not.toContain("i".repeat(4096));
  });

  it("keeps icons, execution and _meta as the upstream sent them, without keys in the gateway's namespace", async ({ expect }) => {
    const workspace = await createWorkspace();
    await addService(workspace, { slug: "rich", url: `${upstreamOrigin()}/fixtures/rich/mcp` });
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const { tools } = await client.listTools();
    expect(tools).toEqual([
      {
        name: "rich__find_file",
        description: "Find a file and link to it.",
        inputSchema: { type: "object", properties: { name: { type: "string" } } },
        icons: [{ src: "https://example.com/file.png", mimeType: "image/png", sizes: ["48x48"] }],
        execution: { taskSupport: "optional" },
        _meta: { "example.com/owner": "files-team" },
      },
    ]);
  });

  it("combines the gateway's instructions with each visible service's, labelled by slug", async ({ expect }) => {
    const gateway = await demoGateway();
    const { service: rich } = await addService(gateway, { slug: "rich", url: `${upstreamOrigin()}/fixtures/rich/mcp` });
    const client = await connectMcp(gateway.clientKey);
    const instructions = client.getInstructions()!;
    expect(instructions.startsWith("Tools, prompts and resources from the services connected to this Rayrun workspace.")).toBe(true);
    expect(instructions).toContain(`## Service \`demo\`\n\n${DEMO_INSTRUCTIONS}\n\n## Service \`rich\`\n\n${RICH_INSTRUCTIONS}`);

    // A profile that sees none of rich (its one tool blocked, its resources and prompts blocked) hears nothing of it.
    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools?serviceId=${rich.id}`, { key: gateway.adminKey })).body.tools as {
      uid: string;
    }[];
    for (const tool of tools) {
      await api(`/v1/workspaces/${gateway.ws}/tools/${tool.uid}/policy`, {
        method: "PUT",
        key: gateway.adminKey,
        body: { profileId: gateway.defaultProfileId, mode: "block" },
      });
    }
    await setServicePolicy(gateway, rich.id, { profileId: gateway.defaultProfileId, resources: "block", prompts: "block" });
    const hidden = (await connectMcp(gateway.clientKey)).getInstructions()!;
    expect(hidden).toContain(DEMO_INSTRUCTIONS);
    expect(hidden).not.toContain("rich");
    expect(hidden).not.toContain(RICH_INSTRUCTIONS);
  });
});
