import { SELF } from "cloudflare:test";
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from "@modelcontextprotocol/client";
import { describe, inject, it } from "vitest";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  CallToolResultSchema,
  CancelTaskResultSchema,
  CreateTaskResultSchema,
  GetTaskResultSchema,
  type ClientCapabilities,
} from "@modelcontextprotocol/sdk/types.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker-provider.js";
import { api, createKey, eventually, ORIGIN } from "../../test/helpers.ts";
import { deployHook, everythingGateway, RESEARCH, RESEARCH_HOOK } from "./mcp.everything.fixtures.ts";

async function connect(key: string, capabilities: ClientCapabilities = {}): Promise<Client> {
  const client = new Client(
    { name: "everything-agent", version: "1.0.0" },
    { capabilities, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

const sessions = async () => (await (await fetch(`${inject("everythingStatsOrigin")}/`)).json()) as { opened: number; open: number };

describe("server-everything behind the gateway", () => {
  it("lists its URL-mode elicitation tool only to clients that declare URL-mode elicitation", async ({ expect }) => {
    const gateway = await everythingGateway();
    const names = async (capabilities: ClientCapabilities) => {
      const client = await connect(gateway.key, capabilities);
      const listed = (await client.listTools()).tools.map((tool) => tool.name);
      await client.close();
      return listed;
    };
    expect(await names({})).not.toContain("every__trigger-url-elicitation");
    expect(await names({ elicitation: {} })).not.toContain("every__trigger-url-elicitation");
    expect(await names({ elicitation: {} })).toContain("every__trigger-elicitation-request");
    expect(await names({ elicitation: { url: {} } })).toContain("every__trigger-url-elicitation");
    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as {
      name: string;
      clientCapabilities: string[] | null;
    }[];
    expect(tools.find((tool) => tool.name === "trigger-url-elicitation")?.clientCapabilities).toEqual(["elicitation.url"]);
  });

  it("calls its task-only tool as a task: created, polled and fetched through the gateway under the gateway's own task id", async ({
    expect,
  }) => {
    const gateway = await everythingGateway();
    const client = await connect(gateway.key);
    const listed = (await client.listTools()).tools.find((tool) => tool.name === RESEARCH);
    expect(listed?.execution).toEqual({ taskSupport: "required" });
    const created = await client.request(
      { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "tides" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    expect(taskId).toMatch(/^tsk_/);
    expect(created.task.status).toBe("working");

    // Another workspace's key, and another key of the same workspace, find no such task.
    const stranger = await everythingGateway();
    const strangerClient = await connect(stranger.key);
    await expect(strangerClient.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema)).rejects.toMatchObject({
      code: -32602,
      message: expect.stringContaining("Task not found"),
    });
    const colleague = await connect(await createKey(gateway, ["tools:call"], gateway.defaultProfileId));
    await expect(colleague.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema)).rejects.toMatchObject({
      code: -32602,
    });

    const done = await eventually(
      () => client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema),
      (task) => task.status === "completed",
      20_000,
    );
    expect(done.taskId).toBe(taskId);
    const result = await client.request({ method: "tasks/result", params: { taskId } }, CallToolResultSchema);
    expect(JSON.stringify(result.content)).toContain("Research Report: tides");
    // Delivered: the task is gone, and the upstream session it lived in is ended.
    await expect(client.request({ method: "tasks/get", params: { taskId } }, GetTaskResultSchema)).rejects.toMatchObject({ code: -32602 });

    // The creation and the result each have their call row.
    const rows = await eventually(
      async () =>
        (await api(`/v1/workspaces/${gateway.ws}/logs`, { key: gateway.adminKey })).body.calls as { name: string; outcome: string }[],
      (calls) => calls.filter((call) => call.name === RESEARCH).length >= 2,
    );
    expect(rows.filter((call) => call.name === RESEARCH).map((call) => call.outcome)).toEqual(["ok", "ok"]);
    await Promise.all([client.close(), strangerClient.close(), colleague.close()]);
  });

  it("runs its task-only tool for a client that does not ask for a task, a 2026-07-28 client included", async ({ expect }) => {
    const gateway = await everythingGateway();
    const legacy = await connect(gateway.key);
    const plain = await legacy.callTool({ name: RESEARCH, arguments: { topic: "reefs" } });
    expect(JSON.stringify(plain.content)).toContain("Research Report: reefs");
    const modern = new ModernClient({ name: "modern-agent", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } });
    await modern.connect(
      new ModernTransport(new URL(`${ORIGIN}/mcp`), {
        fetch: (input, init) => SELF.fetch(input as string, init),
        requestInit: { headers: { authorization: `Bearer ${gateway.key}` } },
      }),
    );
    const result = await modern.callTool({ name: RESEARCH, arguments: { topic: "dunes" } });
    expect(JSON.stringify(result.content)).toContain("Research Report: dunes");
    await legacy.close();
  });

  it("runs the tool's hook: before when the task is created, after on its result", async ({ expect }) => {
    const gateway = await everythingGateway();
    await deployHook(gateway, "simulate-research-query", RESEARCH_HOOK);
    const client = await connect(gateway.key);
    const created = await client.request(
      { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "tides" }, task: { ttl: 60_000 } } },
      CreateTaskResultSchema,
    );
    const result = await client.request({ method: "tasks/result", params: { taskId: created.task.taskId } }, CallToolResultSchema);
    const texts = (result.content as { text: string }[]).map((block) => block.text);
    expect(texts[0]).toMatch(/^after saw \d+ blocks$/);
    // The upstream researched the topic `before` wrote.
    expect(texts.slice(1).join("\n")).toContain("Research Report: hooked tides");
    await client.close();
  });

  it("passes a cancellation on, and refuses a task id it never issued", async ({ expect }) => {
    const gateway = await everythingGateway();
    const client = await connect(gateway.key);
    const created = await client.request(
      { method: "tools/call", params: { name: RESEARCH, arguments: { topic: "moons" }, task: {} } },
      CreateTaskResultSchema,
    );
    const cancelled = await client.request({ method: "tasks/cancel", params: { taskId: created.task.taskId } }, CancelTaskResultSchema);
    expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: "cancelled" });
    await expect(
      client.request({ method: "tasks/get", params: { taskId: "tsk_0000000000000000000000000000000" } }, GetTaskResultSchema),
    ).rejects.toMatchObject({ code: -32602 });
    await client.close();
  });

  it("leaves no upstream session open after a run", async ({ expect }) => {
    const gateway = await everythingGateway();
    const client = await connect(gateway.key, { elicitation: {}, sampling: {}, roots: {} });
    const before = await sessions();
    for (let n = 0; n < 3; n++) {
      const echoed = await client.callTool({ name: "every__echo", arguments: { message: `hi ${n}` } });
      expect(JSON.stringify(echoed.content)).toContain(`hi ${n}`);
    }
    await client.close();
    const after = await eventually(sessions, (count) => count.open === 0, 10_000);
    // Each call of a client with sampling, elicitation and roots had a session of its own, and each was ended.
    expect(after.opened - before.opened).toBeGreaterThanOrEqual(3);
    expect(after.open).toBe(0);
  });
});
