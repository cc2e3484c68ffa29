import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import {
  addService,
  api,
  connectMcp,
  createKey,
  createWorkspace,
  eventually,
  gatewayError,
  newTag,
  type TestWorkspace,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";
import { RELEASE_NOTES_HOOK } from "../hooks/compiler/compiler.fixtures.ts";
import { BEFORE_TEST, gatewayFor, PASS_THROUGH, prefixHook } from "./call-path.fixtures.ts";
import { authorizedService, newLab } from "../upstream-auth/upstream-oauth.fixtures.ts";

describe("one call path: hook tests and live calls see the same values", () => {
  it("runs the seed's own example live: public `query` in, upstream `q` out, and after sees both", async ({ expect }) => {
    const tag = newTag();
    const gateway = await gatewayFor("seed", `${upstreamOrigin()}/fixtures/seed/${tag}/mcp`);
    const uid = gateway.uidOf("search_release_notes");
    // The seed's hook, with an after that reports what it was given.
    const source = RELEASE_NOTES_HOOK.replace(
      'after({ result }) {\n    return { action: "return", result: { items: result.items } };',
      "after({ result, arguments: args, upstreamArguments, context }) {\n" +
        '    return { action: "return", result: { items: result.items, query: args.query, q: upstreamArguments.q, tool: context.toolName } };',
    );
    expect(source).not.toBe(RELEASE_NOTES_HOOK);
    const mock = { items: [{ title: "mock" }] };
    const { revisionId, runs } = await gateway.revision(
      uid,
      source,
      [
        { stage: "before", arguments: { query: "sso" } },
        { stage: "after", arguments: { query: "sso" }, result: mock },
      ],
      { prefix: "v2 " },
    );
    // The test of after derived the upstream arguments from the draft's own before, as a live call does.
    expect(runs[1].value).toEqual({
      action: "return",
      result: { items: mock.items, query: "sso", q: "v2 sso", tool: "seed__search_release_notes" },
    });
    await gateway.deploy(uid, "active", revisionId);

    const client = await connectMcp(gateway.clientKey);
    const live = await client.callTool({ name: "seed__search_release_notes", arguments: { query: "sso" } });
    expect(live.isError).toBeFalsy();
    expect((await upstreamReceived(`seed-${tag}`)).calls.map((call) => call.arguments)).toEqual([{ q: "v2 sso" }]);
    expect(live.structuredContent).toEqual({
      items: [{ title: "Notes about v2 sso" }],
      query: "sso",
      q: "v2 sso",
      tool: "seed__search_release_notes",
    });
  });

  it("gives a hook that branches on context.toolName the same answer in a test and live", async ({ expect }) => {
    const tag = newTag();
    const gateway = await gatewayFor("seed", `${upstreamOrigin()}/fixtures/seed/${tag}/mcp`);
    const uid = gateway.uidOf("search_release_notes");
    const source = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    if (context.toolName !== "seed__search_release_notes") {
      return { action: "reject", reason: "wrong_tool_name", message: "toolName was " + context.toolName };
    }
    return { action: "continue", arguments: args };
  },
});
`;
    const { revisionId, runs } = await gateway.revision(uid, source, [{ stage: "before", arguments: { q: "sso" } }]);
    expect(runs[0].outcome).toBe("continue");
    await gateway.deploy(uid, "active", revisionId);
    const client = await connectMcp(gateway.clientKey);
    const live = await client.callTool({ name: "seed__search_release_notes", arguments: { q: "sso" } });
    expect(live.isError).toBeFalsy();
  });

  it("tests after with explicit upstreamArguments, and refuses to guess them when before would not continue", async ({ expect }) => {
    const tag = newTag();
    const gateway = await gatewayFor("seed", `${upstreamOrigin()}/fixtures/seed/${tag}/mcp`);
    const uid = gateway.uidOf("search_release_notes");
    const source = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    if (args.q === "forbidden") return { action: "reject", reason: "forbidden_query", message: "No." };
    return { action: "continue", arguments: args };
  },
  after({ result, upstreamArguments }) {
    return { action: "return", result: { items: result.items, sent: upstreamArguments } };
  },
});
`;
    await gateway.save(uid, source);
    const explicit = await gateway.as(gateway.writer, `${gateway.hook(uid)}/test`, {
      body: { stage: "after", arguments: { q: "forbidden" }, upstreamArguments: { q: "chosen" }, result: { items: [] } },
    });
    expect(explicit.status).toBe(200);
    expect(explicit.body.value).toEqual({ action: "return", result: { items: [], sent: { q: "chosen" } } });
    const refused = await gateway.as(gateway.writer, `${gateway.hook(uid)}/test`, {
      body: { stage: "after", arguments: { q: "forbidden" }, result: { items: [] } },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({
      code: "invalid_request",
      details: { issues: [{ field: "json.upstreamArguments", message: "Required when before does not let the call through" }] },
    });
  });
});

async function demoHookGateway() {
  const tag = newTag();
  const gateway = await gatewayFor("demo", `${upstreamOrigin()}/t/${tag}/mcp`);
  return { ...gateway, tag, uid: gateway.uidOf("search_release_notes") };
}

describe("every refusal of the call path", () => {
  it("fails closed with hook_unavailable when the bundle is gone from R2", async ({ expect }) => {
    const gateway = await demoHookGateway();
    const a = await gateway.revision(gateway.uid, prefixHook("A"), BEFORE_TEST);
    await gateway.deploy(gateway.uid, "active", a.revisionId);
    // Deleted before any call, so no isolate holds the bundle yet.
    await env.BUNDLES.delete(a.bundleKey);
    const client = await connectMcp(gateway.clientKey);
    const missing = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(missing.isError).toBe(true);
    expect(gatewayError(missing)).toMatchObject({ code: "hook_unavailable", details: { tool: "demo__search_release_notes" } });
    const rows = await eventually(
      () => gateway.logs(gateway.uid),
      (logs) => logs.length === 1,
    );
    expect(rows[0]).toMatchObject({ stage: "pre_dispatch", outcome: "refused", code: "hook_unavailable" });

    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("refuses an active hook built for an earlier upstream definition, hides it from discovery, and never runs such a shadow", async ({
    expect,
  }) => {
    const key = newTag();
    const setVariant = (variant: number) =>
      fetch(`${upstreamOrigin()}/fixtures/mutable/${key}/state`, { method: "POST", body: JSON.stringify({ variant }) });
    await setVariant(0);
    const gateway = await gatewayFor("mut", `${upstreamOrigin()}/fixtures/mutable/${key}/mcp`);
    const echo = gateway.uidOf("echo");
    const first = await gateway.revision(echo, PASS_THROUGH, [{ stage: "before", arguments: { message: "hi" } }]);
    const shadow = await gateway.revision(echo, `// shadow\n${PASS_THROUGH}`, [{ stage: "before", arguments: { message: "hi" } }]);
    await gateway.deploy(echo, "active", first.revisionId);
    await gateway.deploy(echo, "shadow", shadow.revisionId);
    const client = await connectMcp(gateway.clientKey);
    expect((await client.callTool({ name: "mut__echo", arguments: { message: "hi" } })).isError).toBeFalsy();

    await setVariant(1);
    await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/refresh`, { method: "POST", key: gateway.adminKey });
    const changed = (await api(`/v1/workspaces/${gateway.ws}/tools/${echo}`, { key: gateway.adminKey })).body;
    const review = await api(`/v1/workspaces/${gateway.ws}/tools/${echo}/review`, {
      key: gateway.adminKey,
      body: { definitionHash: changed.definitionHash },
    });
    expect(review.status).toBe(200);

    const outdated = await client.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } });
    expect(gatewayError(outdated)).toMatchObject({ code: "hook_outdated", details: { tool: "mut__echo" } });
    expect((await upstreamReceived(`mutable-${key}`)).calls).toHaveLength(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["mut__retired", "mut__stable"]);

    // A current active revision serves again; the shadow built for the earlier definition stays deployed but never runs.
    const current = await gateway.revision(echo, `// current\n${PASS_THROUGH}`, [
      { stage: "before", arguments: { message: "hi", loud: true } },
    ]);
    await gateway.deploy(echo, "active", current.revisionId);
    expect((await client.callTool({ name: "mut__echo", arguments: { message: "hi", loud: true } })).isError).toBeFalsy();
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(["mut__echo", "mut__retired", "mut__stable"]);
    const rows = await eventually(
      () => gateway.logs(echo),
      (logs) => logs.some((row) => row.channel === "shadow" && row.code === "hook_outdated"),
    );
    const shadowRows = rows.filter((row) => row.channel === "shadow");
    expect(shadowRows.map((row) => [row.stage, row.outcome, row.code, row.revisionId])).toEqual([
      ["pre_dispatch", "refused", "hook_outdated", shadow.revisionId],
      ["before", "continue", null, shadow.revisionId],
    ]);
  });

  it("refuses a tool of a service that waits for upstream authorization, and leaves it out of discovery", async ({ expect }) => {
    const lab = await newLab();
    const workspace = await createWorkspace();
    // Authorized (so its tools are indexed), then disconnected: pending again.
    const { serviceId } = await authorizedService(workspace, lab);
    await api(`/v1/workspaces/${workspace.ws}/services/${serviceId}/authorization`, { method: "DELETE", key: workspace.adminKey });
    const client = await connectMcp(await createKey(workspace, ["tools:call"], workspace.defaultProfileId));
    expect((await client.listTools()).tools).toEqual([]);
    const refused = await client.callTool({ name: "lab__whoami", arguments: {} });
    expect(refused.isError).toBe(true);
    expect(gatewayError(refused)).toMatchObject({ code: "upstream_authorization_required", details: { tool: "lab__whoami" } });
    expect((await lab.state()).toolCallsBy).toEqual([]);
    // The requirement follows the upstream's OAuth; it is no longer set by hand.
    const byHand = await api(`/v1/workspaces/${workspace.ws}/services`, {
      key: workspace.adminKey,
      body: { slug: "held", url: `${upstreamOrigin()}/t/${newTag()}/mcp`, requiresAuthorization: true },
    });
    expect(byHand.status).toBe(400);
    expect(byHand.body.error).toMatchObject({ code: "invalid_request", details: { issues: [{ field: "json.requiresAuthorization" }] } });
  });

  it("re-establishes a session the upstream forgot, and answers upstream_unreachable when the upstream is down", async ({ expect }) => {
    const key = newTag();
    const control = (change: { forget?: boolean; down?: boolean }) =>
      fetch(`${upstreamOrigin()}/fixtures/sessions/${key}/state`, { method: "POST", body: JSON.stringify(change) });
    const gateway = await gatewayFor("stateful", `${upstreamOrigin()}/fixtures/sessions/${key}/mcp`);
    const client = await connectMcp(gateway.clientKey);
    const ping = () => client.callTool({ name: "stateful__ping", arguments: {} });
    expect((await ping()).isError).toBeFalsy();
    await control({ forget: true });
    expect((await ping()).isError).toBeFalsy();
    const received = await upstreamReceived(`sessions-${key}`);
    expect(received.calls).toHaveLength(2);
    // Indexing's own two sessions (without and with the relayed capabilities), the first call's, and the one after
    // the upstream forgot it.
    expect(received.methods.filter((message) => message.method === "initialize")).toHaveLength(4);

    await control({ down: true });
    const down = await ping();
    expect(down.isError).toBe(true);
    expect(gatewayError(down)).toMatchObject({ code: "upstream_unreachable", details: { tool: "stateful__ping" } });
    const rows = await eventually(
      () => gateway.logs(gateway.uidOf("ping")),
      (logs) => logs.length === 1,
    );
    expect(rows[0]).toMatchObject({ stage: "upstream", outcome: "upstream_failed", code: "upstream_unreachable" });
    await control({ down: false });
  });

  it("holds a policy approval on a hooked tool whose hook continues, and a hook's approval under an allowing policy", async ({
    expect,
  }) => {
    const gateway = await demoHookGateway();
    const approvalHook = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    if (args.query === "ask") {
      return { action: "require_approval", arguments: { query: "asked" }, reason: "needs_review", message: "Searching for 'asked' on behalf of the agent" };
    }
    return { action: "continue", arguments: { query: "hooked " + args.query } };
  },
});
`;
    const hooked = await gateway.revision(gateway.uid, approvalHook, BEFORE_TEST);
    await gateway.deploy(gateway.uid, "active", hooked.revisionId);
    const client = await connectMcp(gateway.clientKey);
    const call = (query: string) => client.callTool({ name: "demo__search_release_notes", arguments: { query } });
    const approve = (id: string) => api(`/v1/workspaces/${gateway.ws}/approvals/${id}/approve`, { method: "POST", key: gateway.adminKey });

    // The hook asks for approval under an allowing policy: the approver and the agent both read its message.
    const asked = gatewayError(await call("ask"));
    expect(asked).toMatchObject({
      code: "approval_required",
      details: { reason: "needs_review", message: "Searching for 'asked' on behalf of the agent" },
    });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    const pending = await api(`/v1/workspaces/${gateway.ws}/approvals/${asked.details.approvalId}`, { key: gateway.adminKey });
    expect(pending.body).toMatchObject({ reason: "needs_review", message: "Searching for 'asked' on behalf of the agent", source: "hook" });

    // Policy approval holds though the hook continues; once approved, the hook's rewrite goes upstream.
    const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.uid}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    expect(policy.status).toBe(200);
    const needed = gatewayError(await call("sso"));
    expect(needed).toMatchObject({ code: "approval_required", details: { reason: "policy_approval" } });
    expect(needed.details).not.toHaveProperty("message");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
    await approve(needed.details.approvalId);
    expect((await call("sso")).isError).toBeFalsy();
    expect((await upstreamReceived(gateway.tag)).calls.map((received) => received.arguments)).toEqual([{ query: "hooked sso" }]);
  });

  it("keeps log details only when both the service's payload capture and the workspace's detail policy allow them", async ({ expect }) => {
    const gateway = await demoHookGateway();
    const client = await connectMcp(gateway.clientKey);
    const setCapture = (payloadCapture: boolean, detailPolicy: "metadata" | "payloads") =>
      Promise.all([
        api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, {
          method: "PATCH",
          key: gateway.adminKey,
          body: { payloadCapture },
        }),
        api(`/v1/workspaces/${gateway.ws}`, { method: "PATCH", key: gateway.adminKey, body: { detailPolicy } }),
      ]);
    const refusedCall = () => client.callTool({ name: "demo__search_release_notes", arguments: { query: 42 } });
    const detailsOfLastRow = async (count: number) => {
      const rows = await eventually(
        () => gateway.logs(gateway.uid),
        (logs) => logs.length === count,
      );
      return rows[0]!.details;
    };

    await setCapture(true, "metadata");
    expect(gatewayError(await refusedCall()).code).toBe("invalid_arguments");
    expect(await detailsOfLastRow(1)).toBeNull();
    await setCapture(false, "payloads");
    await refusedCall();
    expect(await detailsOfLastRow(2)).toBeNull();
    await setCapture(true, "payloads");
    await refusedCall();
    expect(await detailsOfLastRow(3)).toEqual({ message: "The arguments do not match the tool's input schema" });
  });

  it("shows the active hook's public outputSchema in discovery instead of the upstream's", async ({ expect }) => {
    const gateway = await demoHookGateway();
    const source = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  publicContract: {
    outputSchema: { type: "object", properties: { count: { type: "integer" } }, required: ["count"] },
  },
  after({ result }) {
    return { action: "return", result: { count: result.items.length } };
  },
});
`;
    const revision = await gateway.revision(gateway.uid, source, [{ stage: "after", arguments: { query: "sso" }, result: { items: [] } }]);
    await gateway.deploy(gateway.uid, "active", revision.revisionId);
    const client = await connectMcp(gateway.clientKey);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === "demo__search_release_notes")!;
    expect(listed.outputSchema).toEqual({ type: "object", properties: { count: { type: "integer" } }, required: ["count"] });
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.structuredContent).toEqual({ count: 1 });
  });
});

describe("argument nesting", () => {
  const nested = (levels: number): unknown => (levels === 0 ? "leaf" : { deeper: nested(levels - 1) });

  it("refuses arguments nested past 64 levels with invalid_arguments, before anything reaches the upstream", async ({ expect }) => {
    const tag = newTag();
    const gateway = await gatewayFor("demo", `${upstreamOrigin()}/t/${tag}/mcp`);
    const client = await connectMcp(gateway.clientKey);
    // The arguments object is the first level; `extra` then holds 63 more.
    const atBound = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso", extra: nested(63) } });
    expect(atBound.isError).toBeFalsy();
    for (const levels of [64, 1_500]) {
      const deep = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso", extra: nested(levels) } });
      expect(deep.isError).toBe(true);
      expect(gatewayError(deep)).toMatchObject({
        code: "invalid_arguments",
        details: { violations: [{ pointer: "", message: "nests objects and arrays deeper than 64 levels" }] },
      });
    }
    expect((await upstreamReceived(tag)).calls).toHaveLength(1);
  });
});
