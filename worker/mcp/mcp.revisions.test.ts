import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { api, connectMcp, demoGateway, eventually, gatewayError, ORIGIN, upstreamReceived } from "../../test/helpers.ts";
import { hookGateway, SEARCH_HOOK } from "../hooks/lifecycle/lifecycle.fixtures.ts";

/** What a test needs of a client, whichever SDK and revision it speaks. */
interface AnyClient {
  callTool(params: { name: string; arguments: Record<string, unknown> }): Promise<Record<string, unknown>>;
  listTools(): Promise<{ tools: { name: string }[] }>;
  close(): Promise<void>;
}

/** The same scenarios through the v1 client at 2025-11-25 and the v2 client pinned to 2026-07-28. */
const revisions: [string, (key: string) => Promise<AnyClient>][] = [
  ["2025-11-25 (v1 client)", async (key) => (await connectMcp(key)) as unknown as AnyClient],
  [
    "2026-07-28 (v2 client)",
    async (key) => {
      const client = new ModernClient(
        { name: "revision-agent", version: "1.0.0" },
        { versionNegotiation: { mode: { pin: "2026-07-28" } } },
      );
      await client.connect(
        new ModernTransport(new URL(`${ORIGIN}/mcp`), {
          fetch: (input, init) => SELF.fetch(input as string, init),
          requestInit: { headers: { authorization: `Bearer ${key}` } },
        }),
      );
      return client as unknown as AnyClient;
    },
  ],
];

const nested = (levels: number): unknown => (levels === 0 ? "leaf" : { next: nested(levels - 1) });

for (const [revision, connect] of revisions) {
  describe(`the call pipeline at ${revision}`, () => {
    it("holds a call for approval, names the approval and its link in the text, and runs it once approved", async ({ expect }) => {
      const gateway = await demoGateway();
      const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
        method: "PUT",
        key: gateway.adminKey,
        body: { profileId: gateway.defaultProfileId, mode: "approval" },
      });
      expect(policy.status).toBe(200);
      const client = await connect(gateway.clientKey);
      const held = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
      expect(held.isError).toBe(true);
      const pending = gatewayError(held);
      expect(pending).toMatchObject({ code: "approval_required", details: { reason: "policy_approval" } });
      const { approvalId, approveAt } = pending.details as { approvalId: string; approveAt: string };
      const text = (held.content as { text: string }[])[0]!.text;
      expect(text).toContain(`approval ${approvalId}`);
      expect(text).toContain(approveAt);
      expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);

      const approved = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, { method: "POST", key: gateway.adminKey });
      expect(approved.status).toBe(200);
      const run = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
      expect(run.content).toEqual([{ type: "text", text: "Deleted record r1" }]);
      const again = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
      expect(gatewayError(again).code).toBe("approval_required");
      expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ id: "r1" }]);

      // Both refusals are logged, as on every revision.
      const logs = await eventually(
        () => api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/hook/logs`, { key: gateway.adminKey }),
        (res) => res.body.logs.length >= 2,
      );
      expect(logs.body.logs.map((row: { code: string | null }) => row.code).sort()).toEqual(["approval_required", "approval_required"]);
      await client.close();
    });

    it("runs the tool's active hook: before rewrites what reaches the upstream, after what the client gets", async ({ expect }) => {
      const gateway = await hookGateway();
      const { revisionId } = await gateway.tested(SEARCH_HOOK, { prefix: "release " });
      expect((await gateway.deploy("active", revisionId)).status).toBe(200);
      const client = await connect(gateway.clientKey);
      const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
      expect(result.structuredContent).toEqual({
        items: [{ version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." }],
      });
      expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "release sso" }]);
      await client.close();
    });

    it("tells the upstream nothing is cancelled once a call has finished", async ({ expect }) => {
      const gateway = await demoGateway();
      const client = await connect(gateway.clientKey);
      for (const query of ["sso", "audit"]) {
        const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query } });
        expect(result.isError).toBeFalsy();
      }
      await client.close();
      // The call rows are written after the responses and their requests' ends, where a stray cancellation would go.
      await eventually(
        () => api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey }),
        (res) => res.body.calls.length >= 2,
      );
      const methods = (await upstreamReceived(gateway.tag)).methods.map((message) => message.method);
      expect(methods.filter((method) => method === "tools/call")).toHaveLength(2);
      expect(methods).not.toContain("notifications/cancelled");
    });

    it("hides a blocked tool and refuses arguments past the nesting bound before the upstream", async ({ expect }) => {
      const gateway = await demoGateway();
      await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("lookup_customer")}/policy`, {
        method: "PUT",
        key: gateway.adminKey,
        body: { profileId: gateway.defaultProfileId, mode: "block" },
      });
      const client = await connect(gateway.clientKey);
      expect((await client.listTools()).tools.map((tool) => tool.name)).not.toContain("demo__lookup_customer");
      await expect(client.callTool({ name: "demo__lookup_customer", arguments: { email: "ada@example.com" } })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringContaining("Unknown tool: demo__lookup_customer"),
      });
      const deep = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso", extra: nested(70) } });
      expect(gatewayError(deep)).toMatchObject({ code: "invalid_arguments" });
      expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
      await client.close();
    });
  });
}
