import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { addService, api, connectMcp, createKey, createWorkspace, newTag, upstreamOrigin, upstreamReceived } from "../../test/helpers.ts";
import { MAX_WORKSPACE_TOOL_CHARS, workspaceToolsGuard } from "./indexing.ts";
import { MAX_SERVICES_PER_WORKSPACE } from "./services.store.ts";
import { checkUpstreamUrl } from "./url-guard.ts";
import type { IndexSummary } from "../tools/tools.store.ts";

/** An indexing pass's summary: the lists given, every other one empty (so `toEqual` stays exact). */
const indexSummary = (parts: Partial<IndexSummary>): IndexSummary => ({
  added: [],
  changed: [],
  removed: [],
  unchanged: 0,
  schemaTooComplex: [],
  invalidNames: [],
  review: [],
  ...parts,
});

describe("connecting a service", () => {
  it("indexes every tool with an immutable uid and a definition hash, and never returns secret headers", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "demo", url: `${upstreamOrigin()}/t/${newTag()}/mcp`, headers: { "X-Api-Key": "very-secret-value" } },
    });
    expect(res.status).toBe(201);
    expect(res.body.index).toEqual(indexSummary({ added: ["search_release_notes", "lookup_customer", "delete_record", "export_report"] }));
    expect(res.body.service).toMatchObject({ slug: "demo", secretHeaderNames: ["X-Api-Key"] });
    expect(JSON.stringify(res.body)).not.toContain("very-secret-value");
    const listed = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey });
    expect(JSON.stringify(listed.body)).not.toContain("very-secret-value");

    const row = await env.DB.prepare("SELECT secret_headers FROM services WHERE id = ?")
      .bind(res.body.service.id)
      .first<{ secret_headers: string }>();
    expect(row?.secret_headers).toMatch(/^v1\./);
    expect(row?.secret_headers).not.toContain("very-secret-value");

    const tools = (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools;
    expect(tools).toHaveLength(4);
    for (const tool of tools) {
      expect(tool.uid).toMatch(/^tool_[0-9a-z]{20}$/);
      expect(tool.definitionHash).toMatch(/^[0-9a-f]{64}$/);
      expect(tool.status).toBe("active");
      expect(tool.publicName).toBe(`demo__${tool.name}`);
    }
  });

  it("refuses a slug already in use with 409", async ({ expect }) => {
    const workspace = await createWorkspace();
    const body = { slug: "demo", url: `${upstreamOrigin()}/t/${newTag()}/mcp` };
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body })).status).toBe(201);
    const again = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe("conflict");
  });

  it.each([
    ["http://169.254.169.254/", "Service URL refused: only https URLs are allowed"],
    ["http://10.0.0.1/", "Service URL refused: only https URLs are allowed"],
    ["http://localhost:1/", "Service URL refused: only https URLs are allowed"],
    ["https://169.254.169.254/latest", "Service URL refused: address 169.254.169.254 is private, loopback, link-local or reserved"],
    ["https://10.0.0.1/mcp", "Service URL refused: address 10.0.0.1 is private, loopback, link-local or reserved"],
    ["https://localhost/mcp", "Service URL refused: host localhost is internal"],
    ["https://[::1]/mcp", "Service URL refused: address [::1] is private, loopback, link-local or reserved"],
    ["https://user:pw@example.com/mcp", "Service URL refused: credentials in the URL are not allowed; use secret headers"],
    ["https://metadata/computeMetadata/v1/", "Service URL refused: host metadata is a single-label (internal) name"],
    ["https://instance-data./latest", "Service URL refused: host instance-data is a single-label (internal) name"],
  ])("refuses %s with 400 url_not_allowed", async (url, message) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body: { slug: "bad", url } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { code: "url_not_allowed", message, details: { field: "json.url" } } });
  });

  it("refuses a secret header value with CR, LF or another control character, on create and on update", async ({ expect }) => {
    const workspace = await createWorkspace();
    const message = "header values may contain only tab, space and visible ASCII (no CR, LF or other controls)";
    for (const value of ["token\r\nX-Injected: 1", "token\n", "tok\u0000en", "tok\u007fen", "tok\u2028en", "caf\u00e9"]) {
      const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
        key: workspace.adminKey,
        body: { slug: "crlf", url: `${upstreamOrigin()}/t/${newTag()}/mcp`, headers: { "X-Api-Key": value } },
      });
      expect(created.status, JSON.stringify(value)).toBe(400);
      expect(created.body.error).toEqual({
        code: "invalid_request",
        message: `Invalid json.headers.X-Api-Key: ${message}`,
        details: { issues: [{ field: "json.headers.X-Api-Key", message }] },
      });
    }
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body.services).toEqual([]);

    const service = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "ok", url: `${upstreamOrigin()}/t/${newTag()}/mcp`, headers: { "X-Api-Key": "tab\tand space" } },
    });
    expect(service.status).toBe(201);
    const patched = await api(`/v1/workspaces/${workspace.ws}/services/${service.body.service.id}`, {
      method: "PATCH",
      key: workspace.adminKey,
      body: { headers: { Authorization: "Bearer x\r\n" } },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.error.details.issues).toEqual([{ field: "json.headers.Authorization", message }]);
  });

  it("refuses a redirect to the metadata address", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "redirecting", url: `${upstreamOrigin()}/fixtures/redirect-to-metadata` },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({ code: "url_not_allowed", message: "Upstream URL refused: only https URLs are allowed" });
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body.services).toEqual([]);
  });

  it("never follows a redirect to another origin, which would carry the secret headers there", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "elsewhere", url: `${upstreamOrigin()}/fixtures/redirect-elsewhere`, headers: { Authorization: "Bearer sk_live" } },
    });
    expect(res.status).toBe(400);
    expect(res.body.error).toEqual({
      code: "url_not_allowed",
      message: "Upstream URL refused: it redirects to another origin (https://example.com)",
    });
  });

  it("follows a same-origin 308 redirect", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "moved", url: `${upstreamOrigin()}/fixtures/redirect-same-origin` },
    });
    expect(res.status).toBe(201);
    expect(res.body.index.added).toHaveLength(4);
  });

  it("answers an unreachable upstream with 502 upstream_unreachable and stores nothing", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "down", url: "http://127.0.0.1:1/mcp" },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("upstream_unreachable");
    expect((await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body.services).toEqual([]);
  });

  it("answers an upstream that is not MCP with 502 upstream_protocol_error", async ({ expect }) => {
    const workspace = await createWorkspace();
    const res = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "web", url: `${upstreamOrigin()}/fixtures/not-mcp` },
    });
    expect(res.status).toBe(502);
    expect(res.body.error.code).toBe("upstream_protocol_error");
  });

  it("follows tools/list pagination and refuses an upstream over the tool cap with 413", async ({ expect }) => {
    const workspace = await createWorkspace();
    const paged = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "paged", url: `${upstreamOrigin()}/fixtures/tools/250/mcp` },
    });
    expect(paged.status).toBe(201);
    expect(paged.body.index.added).toHaveLength(250);

    const huge = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "huge", url: `${upstreamOrigin()}/fixtures/tools/1001/mcp` },
    });
    expect(huge.status).toBe(413);
    expect(huge.body).toEqual({
      error: { code: "too_many_tools", message: "The upstream lists more than 1000 tools", details: { limit: 1000 } },
    });
  });
});

describe("refreshing a service", () => {
  async function mutableService() {
    const workspace = await createWorkspace();
    const key = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "mut", url: `${upstreamOrigin()}/fixtures/mutable/${key}/mcp` },
    });
    expect(created.status).toBe(201);
    const clientKey = (
      await api(`/v1/workspaces/${workspace.ws}/keys`, {
        key: workspace.adminKey,
        body: { name: "agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
      })
    ).body.secret as string;
    const tools = async () =>
      (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools as {
        uid: string;
        name: string;
        status: string;
        definitionHash: string;
        previousDefinition: unknown;
      }[];
    const refresh = () =>
      api(`/v1/workspaces/${workspace.ws}/services/${created.body.service.id}/refresh`, { method: "POST", key: workspace.adminKey });
    return { workspace, key, setVariant, clientKey, tools, refresh };
  }

  it("puts a changed definition in review, blocks calls until approved, and marks vanished tools removed", async ({ expect }) => {
    const { workspace, key, setVariant, clientKey, tools, refresh } = await mutableService();
    const before = await tools();
    const echoUid = before.find((tool) => tool.name === "echo")!.uid;

    expect((await refresh()).body).toEqual(indexSummary({ unchanged: 3 }));
    await setVariant(1);
    expect((await refresh()).body).toEqual(indexSummary({ changed: ["echo"], unchanged: 2, review: ["echo"] }));
    const changed = (await tools()).find((tool) => tool.name === "echo")!;
    expect(changed).toMatchObject({ uid: echoUid, status: "review_required" });
    expect(changed.previousDefinition).toMatchObject({ inputSchema: { required: ["message"] } });

    const client = await connectMcp(clientKey);
    const refused = await client.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.["dev.rayrun/error"]).toMatchObject({ code: "tool_review_required" });
    expect((await upstreamReceived(`mutable-${key}`)).calls).toEqual([]);

    const stale = await api(`/v1/workspaces/${workspace.ws}/tools/${echoUid}/review`, {
      key: workspace.adminKey,
      body: { definitionHash: before.find((tool) => tool.name === "echo")!.definitionHash },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.error.code).toBe("definition_changed");
    const approved = await api(`/v1/workspaces/${workspace.ws}/tools/${echoUid}/review`, {
      key: workspace.adminKey,
      body: { definitionHash: changed.definitionHash },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "active", approvedHash: changed.definitionHash, previousDefinition: null });
    const ok = await client.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } });
    expect(ok.isError).toBeFalsy();
    expect((await upstreamReceived(`mutable-${key}`)).calls.map((call) => call.arguments)).toEqual([{ message: "hi", loud: true }]);

    await setVariant(2);
    expect((await refresh()).body).toEqual(indexSummary({ removed: ["retired"], unchanged: 2 }));
    const retired = (await tools()).find((tool) => tool.name === "retired")!;
    expect(retired.status).toBe("removed");
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["mut__echo", "mut__stable"]);
  });

  it("returns a tool to active when the upstream reverts to the approved definition", async ({ expect }) => {
    const { setVariant, tools, refresh } = await mutableService();
    await setVariant(1);
    await refresh();
    await setVariant(0);
    expect((await refresh()).body).toEqual(indexSummary({ changed: ["echo"], unchanged: 2 }));
    expect((await tools()).find((tool) => tool.name === "echo")!.status).toBe("active");
  });
});

describe("finding 9: new tools go live without review", () => {
  async function mutableGateway(connect: { reviewInitialTools?: boolean } = {}) {
    const workspace = await createWorkspace();
    const key = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "mut", url: `${upstreamOrigin()}/fixtures/mutable/${key}/mcp`, ...connect },
    });
    expect(created.status).toBe(201);
    const clientKey = (
      await api(`/v1/workspaces/${workspace.ws}/keys`, {
        key: workspace.adminKey,
        body: { name: "agent", scopes: ["tools:call"], profileId: workspace.defaultProfileId },
      })
    ).body.secret as string;
    const tools = async () =>
      (await api(`/v1/workspaces/${workspace.ws}/tools`, { key: workspace.adminKey })).body.tools as Record<string, any>[];
    const refresh = () =>
      api(`/v1/workspaces/${workspace.ws}/services/${created.body.service.id}/refresh`, { method: "POST", key: workspace.adminKey });
    return { workspace, key, setVariant, created, clientKey, tools, refresh };
  }

  it("a tool a refresh adds to an indexed service enters review: hidden, refused tool_review_required, until approved", async ({
    expect,
  }) => {
    const { workspace, key, setVariant, clientKey, tools, refresh } = await mutableGateway();
    await setVariant(3);
    expect((await refresh()).body).toEqual(indexSummary({ added: ["delete_everything"], unchanged: 3, review: ["delete_everything"] }));
    const added = (await tools()).find((tool) => tool.name === "delete_everything")!;
    expect(added).toMatchObject({ status: "review_required", approvedHash: null, previousDefinition: null });

    const client = await connectMcp(clientKey);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["mut__echo", "mut__retired", "mut__stable"]);
    const refused = await client.callTool({ name: "mut__delete_everything", arguments: {} });
    expect(refused.isError).toBe(true);
    expect(refused._meta?.["dev.rayrun/error"]).toEqual({
      code: "tool_review_required",
      message: "mut__delete_everything is new: an admin must review its definition before it can be called",
      details: { tool: "mut__delete_everything", review: "new_tool" },
    });
    expect((await upstreamReceived(`mutable-${key}`)).calls).toEqual([]);
    // Refreshing again keeps it in review: nothing an admin approved has changed.
    expect((await refresh()).body).toMatchObject({ added: [], changed: [], unchanged: 4, review: [] });
    expect((await tools()).find((tool) => tool.name === "delete_everything")!.status).toBe("review_required");

    const approved = await api(`/v1/workspaces/${workspace.ws}/tools/${added.uid}/review`, {
      key: workspace.adminKey,
      body: { definitionHash: added.definitionHash },
    });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ status: "active", approvedHash: added.definitionHash, previousDefinition: null });
    expect((await client.callTool({ name: "mut__delete_everything", arguments: {} })).isError).toBeFalsy();
    expect((await upstreamReceived(`mutable-${key}`)).calls.map((call) => call.tool)).toEqual(["delete_everything"]);
  });

  it("a changed definition's refusal says so", async ({ expect }) => {
    const { setVariant, clientKey, refresh } = await mutableGateway();
    await setVariant(1);
    expect((await refresh()).body).toMatchObject({ changed: ["echo"], review: ["echo"] });
    const refused = await (await connectMcp(clientKey)).callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } });
    expect(refused._meta?.["dev.rayrun/error"]).toEqual({
      code: "tool_review_required",
      message: "The upstream changed mut__echo's definition; an admin must review it before it can be called",
      details: { tool: "mut__echo", review: "changed_definition" },
    });
  });

  it("a service connected with reviewInitialTools starts with every tool in review; without it they start active", async ({ expect }) => {
    const reviewed = await mutableGateway({ reviewInitialTools: true });
    expect(reviewed.created.body.service.reviewInitialTools).toBe(true);
    expect(reviewed.created.body.index).toEqual(
      indexSummary({ added: ["echo", "retired", "stable"], review: ["echo", "retired", "stable"] }),
    );
    expect((await reviewed.tools()).map((tool) => [tool.name, tool.status, tool.approvedHash])).toEqual([
      ["echo", "review_required", null],
      ["retired", "review_required", null],
      ["stable", "review_required", null],
    ]);
    const client = await connectMcp(reviewed.clientKey);
    expect((await client.listTools()).tools).toEqual([]);
    expect((await client.callTool({ name: "mut__stable", arguments: {} }))._meta?.["dev.rayrun/error"]).toMatchObject({
      code: "tool_review_required",
      details: { review: "new_tool" },
    });
    expect((await upstreamReceived(`mutable-${reviewed.key}`)).calls).toEqual([]);

    const trusted = await mutableGateway();
    expect(trusted.created.body.service.reviewInitialTools).toBe(false);
    expect(trusted.created.body.index.review).toEqual([]);
    expect((await trusted.tools()).every((tool) => tool.status === "active")).toBe(true);
  });
});

describe("URL policy", () => {
  it("allows private hosts only when they are on the dev allow-list", ({ expect }) => {
    const allow = new Set(["127.0.0.1"]);
    expect(checkUpstreamUrl("http://127.0.0.1:8788/mcp", allow).ok).toBe(true);
    expect(checkUpstreamUrl("http://127.0.0.1:8788/mcp", new Set()).ok).toBe(false);
    expect(checkUpstreamUrl("https://mcp.example.com/mcp", new Set()).ok).toBe(true);
    // Integer and hex spellings of the metadata address normalise to dotted form and are refused.
    expect(checkUpstreamUrl("https://2852039166/", new Set())).toMatchObject({ ok: false });
    expect(checkUpstreamUrl("https://0xa9fea9fe/", new Set())).toMatchObject({ ok: false });
    expect(checkUpstreamUrl("https://[::ffff:169.254.169.254]/", new Set())).toMatchObject({ ok: false });
    expect(checkUpstreamUrl("https://metadata.google.internal/", new Set())).toMatchObject({ ok: false });
    expect(checkUpstreamUrl("ftp://example.com/", new Set())).toMatchObject({ ok: false });
    // A trailing root dot names the same host.
    for (const url of ["https://localhost./", "https://metadata.google.internal./", "https://foo.local./", "https://x.internal./"]) {
      expect(checkUpstreamUrl(url, new Set()), url).toMatchObject({ ok: false });
    }
    // IPv6 forms that embed or alias private IPv4, and every non-global range.
    for (const url of [
      "https://[::169.254.169.254]/",
      "https://[::127.0.0.1]/",
      "https://[64:ff9b::a9fe:a9fe]/",
      "https://[2002:a9fe:a9fe::]/",
      "https://[2001::1]/",
      "https://[2001:db8::1]/",
      "https://[fec0::1]/",
      "https://[fd00::1]/",
      "https://[fe80::1]/",
      "https://[ff02::1]/",
      "https://[100::1]/",
    ]) {
      expect(checkUpstreamUrl(url, new Set()), url).toMatchObject({ ok: false });
    }
    expect(checkUpstreamUrl("https://[2606:4700:4700::1111]/", new Set())).toMatchObject({ ok: true });
    // A single-label name passes only when the dev allow-list names it.
    expect(checkUpstreamUrl("https://metadata/", new Set())).toMatchObject({ ok: false });
    expect(checkUpstreamUrl("http://upstream:8788/mcp", new Set(["upstream"]))).toMatchObject({ ok: true });
  });
});

describe("a key in the service URL's query", () => {
  const SECRET = "sk-query-secret-7f3a";

  /** A service whose URL carries its key in the query, and where the upstream records it. */
  async function queryService() {
    const workspace = await createWorkspace();
    const tag = newTag();
    const base = `${upstreamOrigin()}/t/${tag}/mcp`;
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "keyed", url: `${base}?api_key=${SECRET}&region=eu#ignored` },
    });
    expect(created.status).toBe(201);
    return { workspace, tag, base, created, service: created.body.service as { id: string; url: string } };
  }

  const pathsReceived = async (tag: string) => (await upstreamReceived(tag)).methods.map((request) => [request.method, request.path]);

  it("keeps the query like secret headers: sent to the upstream, sealed at rest, never returned", async ({ expect }) => {
    const { workspace, tag, base, created, service } = await queryService();
    expect(created.body.service).toMatchObject({ url: base, secretQueryNames: ["api_key", "region"] });
    const shown = [
      created.body,
      (await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey })).body,
      (await api(`/v1/workspaces/${workspace.ws}/services/${service.id}`, { key: workspace.adminKey })).body,
    ];
    for (const body of shown) expect(JSON.stringify(body)).not.toContain(SECRET);

    const row = await env.DB.prepare("SELECT url, secret_query, secret_query_names FROM services WHERE id = ?")
      .bind(service.id)
      .first<{ url: string; secret_query: string; secret_query_names: string }>();
    expect(row).toMatchObject({ url: base, secret_query_names: '["api_key","region"]' });
    expect(row!.secret_query).toMatch(/^v1\./);
    expect(row!.secret_query).not.toContain(SECRET);

    // Indexing and a call through /mcp both reach the upstream with the query (the fragment is never sent).
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    const result = await client.callTool({ name: "keyed__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    const query = `/t/${tag}/mcp?api_key=${SECRET}&region=eu`;
    expect(await pathsReceived(tag)).toEqual(
      expect.arrayContaining([
        ["initialize", query],
        ["tools/list", query],
        ["tools/call", query],
      ]),
    );
    expect((await pathsReceived(tag)).every(([, path]) => path === query)).toBe(true);
    await client.close();
  });

  it("names no part of the query that is all value: a key sent as the bare query (`?sk-…`) is not its name", async ({ expect }) => {
    const workspace = await createWorkspace();
    const tag = newTag();
    const base = `${upstreamOrigin()}/t/${tag}/mcp`;
    const created = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "bare", url: `${base}?${SECRET}&region=eu` },
    });
    expect(created.status).toBe(201);
    expect(created.body.service).toMatchObject({ url: base, secretQueryNames: ["region"] });
    const listed = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey });
    expect(JSON.stringify([created.body, listed.body])).not.toContain(SECRET);
    expect((await pathsReceived(tag)).at(-1)).toEqual(["tools/list", `/t/${tag}/mcp?${SECRET}&region=eu`]);
  });

  it("keeps the query through a change that leaves the URL alone, and drops it with a URL sent without one", async ({ expect }) => {
    const { workspace, tag, base, service } = await queryService();
    const path = `/v1/workspaces/${workspace.ws}/services/${service.id}`;
    const capture = await api(path, { method: "PATCH", key: workspace.adminKey, body: { payloadCapture: true } });
    expect(capture.body).toMatchObject({ url: base, secretQueryNames: ["api_key", "region"], payloadCapture: true });
    await api(`${path}/refresh`, { method: "POST", key: workspace.adminKey });
    expect((await pathsReceived(tag)).at(-1)).toEqual(["tools/list", `/t/${tag}/mcp?api_key=${SECRET}&region=eu`]);

    const replaced = await api(path, { method: "PATCH", key: workspace.adminKey, body: { url: base } });
    expect(replaced.status).toBe(200);
    expect(replaced.body).toMatchObject({ url: base, secretQueryNames: [] });
    expect(await env.DB.prepare("SELECT secret_query FROM services WHERE id = ?").bind(service.id).first("secret_query")).toBeNull();
    await api(`${path}/refresh`, { method: "POST", key: workspace.adminKey });
    expect((await pathsReceived(tag)).at(-1)).toEqual(["tools/list", `/t/${tag}/mcp`]);
  });

  it("shows a service stored before queries were sealed without its query, and seals it at its next change", async ({ expect }) => {
    const workspace = await createWorkspace();
    const tag = newTag();
    const base = `${upstreamOrigin()}/t/${tag}/mcp`;
    const created = await addService(workspace, { slug: "old", url: base });
    // As migration 0021 left such a row: the query still in `url`, nothing sealed.
    await env.DB.prepare("UPDATE services SET url = ?, secret_query = NULL, secret_query_names = NULL WHERE id = ?")
      .bind(`${base}?token=${SECRET}`, created.service.id)
      .run();
    const path = `/v1/workspaces/${workspace.ws}/services/${created.service.id}`;
    const shown = await api(path, { key: workspace.adminKey });
    expect(shown.body).toMatchObject({ url: base, secretQueryNames: ["token"] });
    expect(JSON.stringify(shown.body)).not.toContain(SECRET);

    await api(path, { method: "PATCH", key: workspace.adminKey, body: { payloadCapture: true } });
    const row = await env.DB.prepare("SELECT url, secret_query, secret_query_names FROM services WHERE id = ?")
      .bind(created.service.id)
      .first<{ url: string; secret_query: string; secret_query_names: string }>();
    expect(row).toMatchObject({ url: base, secret_query_names: '["token"]' });
    expect(row!.secret_query).not.toContain(SECRET);
    await api(`${path}/refresh`, { method: "POST", key: workspace.adminKey });
    expect((await pathsReceived(tag)).at(-1)).toEqual(["tools/list", `/t/${tag}/mcp?token=${SECRET}`]);
  });
});

describe("what one workspace may connect", () => {
  /** `count` live services written straight to D1: only their number matters to the bound. */
  async function fillServices(workspace: string, count: number): Promise<void> {
    await env.DB.prepare(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
       INSERT INTO services (id, workspace_id, slug, url, created_at)
       SELECT 'svc_fill_' || ?1 || '_' || i, ?1, 'fill-' || i, 'https://fill.example/mcp', strftime('%Y-%m-%dT%H:%M:%fZ', 'now') FROM s`,
    )
      .bind(workspace, count)
      .run();
  }

  const connect = (workspace: { ws: string; adminKey: string }, slug: string, url: string) =>
    api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey, body: { slug, url } });

  it("is held by the write itself: a batch that leaves the tool definitions past the bound is rolled back whole", async ({ expect }) => {
    const workspace = await createWorkspace();
    const created = await connect(workspace, "demo", `${upstreamOrigin()}/t/${newTag()}/mcp`);
    expect(created.status).toBe(201);
    const serviceId = created.body.service.id as string;
    // What a connect or refresh racing another's check would write: five more tools of 1.8 M characters (a D1 row holds
    // at most 2 MB), past the bound together.
    const now = "strftime('%Y-%m-%dT%H:%M:%fZ', 'now')";
    const big = env.DB.prepare(
      `WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < 5)
       INSERT INTO tools (uid, workspace_id, service_id, name, definition, definition_hash, status, first_seen_at, updated_at)
       SELECT ?1 || i, ?2, ?3, 'big_' || i, replace(hex(zeroblob(900000)), '0', 'd'), 'hash', 'active', ${now}, ${now} FROM s`,
    ).bind(`tool_big_${newTag()}_`, workspace.ws, serviceId);
    await expect(env.DB.batch([big, workspaceToolsGuard(env.DB, workspace.ws)])).rejects.toThrow(/CHECK constraint failed: bound_broken/);
    const tools = await env.DB.prepare("SELECT name FROM tools WHERE workspace_id = ? ORDER BY name")
      .bind(workspace.ws)
      .all<{ name: string }>();
    expect(tools.results.map((tool) => tool.name)).toEqual(["delete_record", "export_report", "lookup_customer", "search_release_notes"]);
    // Under the bound the guard writes nothing and the batch goes through.
    await env.DB.batch([workspaceToolsGuard(env.DB, workspace.ws)]);
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM bound_guards").first("n")).toBe(0);
  });

  it("refuses a service past MAX_SERVICES_PER_WORKSPACE with 413 too_many_services, before reaching its upstream", async ({ expect }) => {
    const workspace = await createWorkspace();
    await fillServices(workspace.ws, MAX_SERVICES_PER_WORKSPACE - 1);
    expect((await connect(workspace, "last", `${upstreamOrigin()}/t/${newTag()}/mcp`)).status).toBe(201);

    const tag = newTag();
    const refused = await connect(workspace, "over", `${upstreamOrigin()}/t/${tag}/mcp`);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toEqual({
      code: "too_many_services",
      message: `A workspace holds at most ${MAX_SERVICES_PER_WORKSPACE} services; delete one first`,
      details: { limit: MAX_SERVICES_PER_WORKSPACE },
    });
    expect((await upstreamReceived(tag)).methods).toEqual([]);

    // A deleted service frees its place.
    const deleted = await api(`/v1/workspaces/${workspace.ws}/services/svc_fill_${workspace.ws}_1`, {
      method: "DELETE",
      key: workspace.adminKey,
    });
    expect(deleted.status).toBe(204);
    expect((await connect(workspace, "over", `${upstreamOrigin()}/t/${tag}/mcp`)).status).toBe(201);
  });

  it("lets only one of two connects racing for the last place in", async ({ expect }) => {
    const workspace = await createWorkspace();
    await fillServices(workspace.ws, MAX_SERVICES_PER_WORKSPACE - 1);
    const raced = await Promise.all(["one", "two"].map((slug) => connect(workspace, slug, `${upstreamOrigin()}/t/${newTag()}/mcp`)));
    expect(raced.map((res) => res.status).sort()).toEqual([201, 413]);
    expect(raced.find((res) => res.status === 413)!.body.error.code).toBe("too_many_services");
    const live = await env.DB.prepare("SELECT COUNT(*) AS live FROM services WHERE workspace_id = ? AND deleted_at IS NULL")
      .bind(workspace.ws)
      .first("live");
    expect(live).toBe(MAX_SERVICES_PER_WORKSPACE);
    // The loser left no tools behind without a service.
    const orphans = await env.DB.prepare(
      "SELECT COUNT(*) AS orphans FROM tools t LEFT JOIN services s ON s.id = t.service_id WHERE t.workspace_id = ? AND s.id IS NULL",
    )
      .bind(workspace.ws)
      .first("orphans");
    expect(orphans).toBe(0);
  });

  it("refuses a listing that takes the workspace's tool definitions past MAX_WORKSPACE_TOOL_CHARS, connecting or refreshing", async ({
    expect,
  }) => {
    const workspace = await createWorkspace();
    // Each fat tool carries a 100 KiB description: 35 of them are about 3.5 MiB, under the 4 MiB per service.
    const fat = (count: number) => `${upstreamOrigin()}/fixtures/fat-tools/${count}/mcp`;
    const first = await connect(workspace, "fat-a", fat(35));
    expect(first.status).toBe(201);
    expect((await connect(workspace, "fat-b", fat(35))).status).toBe(201);

    const refused = await connect(workspace, "fat-c", fat(35));
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({
      code: "workspace_tools_too_large",
      details: { limit: MAX_WORKSPACE_TOOL_CHARS, otherServices: expect.any(Number), thisService: expect.any(Number) },
    });
    const { otherServices, thisService } = refused.body.error.details;
    expect(otherServices + thisService).toBeGreaterThan(MAX_WORKSPACE_TOOL_CHARS);
    expect(otherServices).toBeGreaterThan(2 * 35 * 100 * 1024);

    // What is left still takes a smaller service, and a refresh counts the service's new listing in place of its own.
    expect((await connect(workspace, "fat-d", fat(10))).status).toBe(201);
    const refreshed = await api(`/v1/workspaces/${workspace.ws}/services/${first.body.service.id}/refresh`, {
      method: "POST",
      key: workspace.adminKey,
    });
    expect(refreshed.status).toBe(200);
    expect((await connect(workspace, "fat-e", fat(5))).body.error.code).toBe("workspace_tools_too_large");
    const services = await api(`/v1/workspaces/${workspace.ws}/services`, { key: workspace.adminKey });
    expect(services.body.services.map((service: { slug: string }) => service.slug)).toEqual(["fat-a", "fat-b", "fat-d"]);
  }, 60_000);
});
