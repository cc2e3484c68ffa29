import { describe, it } from "vitest";
import { api, connectMcp, eventually } from "../../test/helpers.ts";
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
