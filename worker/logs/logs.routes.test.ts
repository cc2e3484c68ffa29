import { describe, it } from "vitest";
import { api, connectMcp, createKey, demoGateway, eventually } from "../../test/helpers.ts";
import { browserCaller, hookGateway, SEARCH_HOOK, type Caller } from "../hooks/lifecycle/lifecycle.fixtures.ts";

describe("hook log details in the browser", () => {
  it("shows captured details to a browser admin only, not to an editor or a viewer", async ({ expect }) => {
    const gateway = await hookGateway();
    const { revisionId } = await gateway.tested(SEARCH_HOOK);
    expect((await gateway.deploy("active", revisionId)).status).toBe(200);
    await api(`/v1/workspaces/${gateway.ws}`, { method: "PATCH", key: gateway.adminKey, body: { detailPolicy: "payloads" } });
    await api(`/v1/workspaces/${gateway.ws}/services/${gateway.service.id}`, {
      method: "PATCH",
      key: gateway.adminKey,
      body: { payloadCapture: true },
    });
    const client = await connectMcp(gateway.clientKey);
    await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });

    const logsAs = async (caller: Caller) => {
      const res = await gateway.call(caller, `${gateway.base()}/logs`);
      expect(res.status).toBe(200);
      return res.body.logs as Record<string, unknown>[];
    };
    const admin = await browserCaller(gateway.ws, gateway.adminKey, "admin");
    const captured = await eventually(
      () => logsAs(admin),
      (rows) => rows.length === 2,
    );
    expect(captured.map((row) => [row.stage, row.outcome])).toEqual([
      ["after", "return"],
      ["before", "continue"],
    ]);
    expect(captured[1]!.details).toEqual({ logs: [{ level: "info", message: "searching", data: { query: "sso" } }] });

    // An editor holds hooks:write, yet in the browser only an admin sees captured details.
    const withoutDetails = captured.map(({ details: _, ...row }) => row);
    for (const role of ["editor", "viewer"] as const) {
      const rows = await logsAs(await browserCaller(gateway.ws, gateway.adminKey, role));
      expect(rows, role).toEqual(withoutDetails);
    }
  });
});

/** The id of the key behind a secret, as the API names it. */
const keyIdOf = async (secret: string) => (await api("/v1/whoami", { key: secret })).body.id as string;

describe("who made a call", () => {
  it("records the API key behind a call on its log rows as key:<key id>", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    // Arguments that fail the input schema leave a pre-dispatch row without any hook.
    const refused = await client.callTool({ name: "demo__search_release_notes", arguments: { query: 5 } });
    expect(refused.isError).toBe(true);
    const toolUid = gateway.toolUid("search_release_notes");
    const logs = await eventually(
      async () => (await api(`/v1/workspaces/${gateway.ws}/tools/${toolUid}/hook/logs`, { key: gateway.adminKey })).body.logs,
      (rows: Record<string, unknown>[]) => rows.length === 1,
    );
    expect(logs[0]).toMatchObject({ stage: "pre_dispatch", outcome: "refused", code: "invalid_arguments" });
    expect(logs[0]!.actor).toBe(`key:${await keyIdOf(gateway.clientKey)}`);
  });
});

describe("content logs", () => {
  it("lists a service's reads and prompt gets with the actor, the item only for readers who see details", async ({ expect }) => {
    const gateway = await demoGateway();
    const client = await connectMcp(gateway.clientKey);
    await client.readResource({ uri: "rayrun://demo/notes://release/2.3.1" });
    await client.getPrompt({ name: "demo__summarize_release", arguments: { version: "2.4.0" } });
    const path = `/v1/workspaces/${gateway.ws}/services/${gateway.service.id}/content-logs`;
    const admin = await eventually(
      () => api(path, { key: gateway.adminKey }),
      (res) => res.body.logs?.length === 2,
    );
    expect(admin.status).toBe(200);
    const actor = `key:${await keyIdOf(gateway.clientKey)}`;
    const row = { serviceId: gateway.service.id, actor, requestId: expect.any(String), code: null, outcome: "ok" };
    expect(admin.body).toEqual({
      logs: [
        {
          ...row,
          id: expect.any(Number),
          method: "prompts/get",
          item: "summarize_release",
          durationMs: expect.any(Number),
          createdAt: expect.any(String),
        },
        {
          ...row,
          id: expect.any(Number),
          method: "resources/read",
          item: "notes://release/2.3.1",
          durationMs: expect.any(Number),
          createdAt: expect.any(String),
        },
      ],
      nextCursor: null,
    });

    // A hooks:read key sees the rows without the item; a tools:call key does not read logs.
    const reader = await createKey(gateway, ["hooks:read"]);
    const withoutItem = admin.body.logs.map(({ item: _, ...rest }: Record<string, unknown>) => rest);
    expect((await api(path, { key: reader })).body.logs).toEqual(withoutItem);
    const forbidden = await api(path, { key: gateway.clientKey });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error.code).toBe("forbidden");

    // Filters, pages and JSON lines, as for call logs.
    const page = await api(`${path}?limit=1`, { key: gateway.adminKey });
    expect(page.body.logs.map((log: { method: string }) => log.method)).toEqual(["prompts/get"]);
    const next = await api(`${path}?limit=1&cursor=${page.body.nextCursor}`, { key: gateway.adminKey });
    expect(next.body.logs.map((log: { method: string }) => log.method)).toEqual(["resources/read"]);
    const reads = await api(`${path}?method=resources/read&format=jsonl`, { key: gateway.adminKey });
    expect(reads.headers.get("content-type")).toBe("application/x-ndjson");
    expect(
      (reads.body as string)
        .trim()
        .split("\n")
        .map((line) => JSON.parse(line).item),
    ).toEqual(["notes://release/2.3.1"]);

    const unknown = await api(`/v1/workspaces/${gateway.ws}/services/svc_missing/content-logs`, { key: gateway.adminKey });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe("not_found");
    const badQuery = await api(`${path}?method=tools/call`, { key: gateway.adminKey });
    expect(badQuery.status).toBe(400);
    expect(badQuery.body.error.code).toBe("invalid_request");
  });
});
