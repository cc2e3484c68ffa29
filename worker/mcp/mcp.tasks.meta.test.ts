import { SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CreateTaskResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { addService, createKey, createWorkspace, newTag, ORIGIN, upstreamOrigin } from "../../test/helpers.ts";

/**
 * A 2025-11-25 upstream's task answers (its creation, status and cancellation) reach the client through the gateway, which
 * answers under its own task id: the upstream's `_meta` may not speak for the gateway (`dev.rayrun/…`) nor name the
 * upstream's own task (`related-task`), whose id never leaves the gateway. The v1 SDK upstream sends `_meta` of its
 * choosing only on the creation (its tasks/get and tasks/cancel answers are built from its task store), so that is
 * the answer shown here; the status and cancellation answers pass the same filter (mcp.tasks.ts `asGatewayTask`).
 */
describe("an upstream task's creation answer", () => {
  it("lose the _meta keys that would speak for the gateway or name the upstream's task, and keep the rest", async ({ expect }) => {
    const ws = await createWorkspace();
    await addService(ws, { slug: "asks", url: `${upstreamOrigin()}/fixtures/tasking/${newTag()}/mcp` });
    const client = new Client({ name: "tasks-agent", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${await createKey(ws, ["tools:call"], ws.defaultProfileId)}` } },
      }),
    );
    const created = await client.request(
      { method: "tools/call", params: { name: "asks__forged_meta", arguments: {}, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(taskId).toMatch(/^tsk_/);
    expect(created._meta).toEqual({ "example.com/note": "kept" });

    await client.close();
  });
});
