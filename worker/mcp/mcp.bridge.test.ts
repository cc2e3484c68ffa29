import { env, SELF } from "cloudflare:test";
import { describe, it } from "vitest";
import { Client, StreamableHTTPClientTransport, type ClientCapabilities } from "@modelcontextprotocol/client";
import {
  addService,
  api,
  createKey,
  createWorkspace,
  demoGateway,
  eventually,
  newTag,
  ORIGIN,
  upstreamOrigin,
  upstreamReceived,
} from "../../test/helpers.ts";

const REVISION = "2026-07-28";

/** A workspace fronting the interactive 2025-era fixture (elicitation, sampling, roots) as service `live`. */
async function interactiveGateway() {
  const ws = await createWorkspace();
  const tag = newTag();
  await addService(ws, { slug: "live", url: `${upstreamOrigin()}/fixtures/interactive/${tag}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  return { ...ws, key, tag };
}

async function connectModern(key: string, capabilities: ClientCapabilities): Promise<Client> {
  const client = new Client({ name: "modern-agent", version: "1.0.0" }, { capabilities, versionNegotiation: { mode: { pin: REVISION } } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
      fetch: (input, init) => SELF.fetch(input as string, init),
      requestInit: { headers: { authorization: `Bearer ${key}` } },
    }),
  );
  return client;
}

/** One raw 2026-07-28 tools/call. */
async function rawCall(key: string, params: Record<string, unknown>, capabilities: ClientCapabilities) {
  const res = await SELF.fetch(`${ORIGIN}/mcp`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${key}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": REVISION,
      "mcp-method": "tools/call",
      "mcp-name": String(params.name),
    },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "tools/call",
      params: {
        _meta: { "io.modelcontextprotocol/protocolVersion": REVISION, "io.modelcontextprotocol/clientCapabilities": capabilities },
        ...params,
      },
    }),
  });
  return (await res.json()) as Record<string, any>;
}

const text = (result: Record<string, unknown>) => (result.content as { text: string }[])[0]!.text;

describe("a 2026-07-28 client in front of a 2025-era upstream that asks for input mid-call", () => {
  it("gets the upstream's elicitation as an input-required result, and its answer reaches the waiting upstream request", async ({
    expect,
  }) => {
    const gateway = await interactiveGateway();
    const client = await connectModern(gateway.key, { elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      asked.push((request.params as { message: string }).message);
      return { action: "accept", content: { name: "Ada" } };
    });
    const result = await client.callTool({ name: "live__ask_user", arguments: { question: "Who is asking?" } });
    expect(asked).toEqual(["Who is asking?"]);
    expect(text(result)).toBe('accept: {"name":"Ada"}');
    // One upstream call: the retry answered the pending request, it did not call again.
    expect((await upstreamReceived(`interactive-${gateway.tag}`)).calls.filter((call) => call.tool === "ask_user")).toHaveLength(1);
  });

  it("bridges a sampling request the same way", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connectModern(gateway.key, { sampling: {} });
    client.setRequestHandler("sampling/createMessage", async () => ({
      role: "assistant",
      content: { type: "text", text: "forty-two" },
      model: "test-model",
    }));
    const result = await client.callTool({ name: "live__ask_model", arguments: { prompt: "The answer?" } });
    expect(text(result)).toBe("model said: forty-two");
  });

  it("answers with a signed requestState, and refuses one that was tampered with or belongs to another call", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const capabilities = { elicitation: { form: {} } };
    const first = await rawCall(gateway.key, { name: "live__ask_user", arguments: { question: "Name?" } }, capabilities);
    expect(first.result).toMatchObject({
      resultType: "input_required",
      inputRequests: { r1: { method: "elicitation/create", params: { mode: "form", message: "Name?" } } },
      requestState: expect.stringMatching(/^v1\./),
    });
    const state = first.result.requestState as string;
    const tampered = `${state.slice(0, -2)}${state.endsWith("A") ? "B" : "A"}A`;
    const forged = await rawCall(
      gateway.key,
      {
        name: "live__ask_user",
        arguments: { question: "Name?" },
        requestState: tampered,
        inputResponses: { r1: { action: "accept", content: { name: "Eve" } } },
      },
      capabilities,
    );
    expect(forged.error).toMatchObject({ code: -32602, message: "Invalid or expired requestState" });
    const otherCall = await rawCall(
      gateway.key,
      {
        name: "live__ask_user",
        arguments: { question: "Something else?" },
        requestState: state,
        inputResponses: { r1: { action: "decline" } },
      },
      capabilities,
    );
    expect(otherCall.error).toMatchObject({ code: -32602, data: { code: "request_state_mismatch" } });
    const otherKey = await createKey(gateway, ["tools:call"], gateway.defaultProfileId);
    const stolen = await rawCall(
      otherKey,
      { name: "live__ask_user", arguments: { question: "Name?" }, requestState: state, inputResponses: { r1: { action: "decline" } } },
      capabilities,
    );
    expect(stolen.error).toMatchObject({ code: -32602, data: { code: "request_state_mismatch" } });
    // The rightful retry still completes the call.
    const done = await rawCall(
      gateway.key,
      {
        name: "live__ask_user",
        arguments: { question: "Name?" },
        requestState: state,
        inputResponses: { r1: { action: "accept", content: { name: "Ada" } } },
      },
      capabilities,
    );
    expect(done.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: 'accept: {"name":"Ada"}' }] });
  });
});

describe("a call that goes on after its first round", () => {
  // Workers cancels `waitUntil` work 30 s after the response that started it, which would leave such a call with no
  // outcome and no log row: the gateway stops it itself at CONTINUATION_MS (28 s), upstream too, and records it.
  it("is stopped 28 s after its first round was answered, its upstream request cancelled, and logged as cancelled", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const capabilities = { elicitation: { form: {} } };
    const call = { name: "live__ask_then_wait", arguments: { seconds: 60 } };
    const first = await rawCall(gateway.key, call, capabilities);
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const answered = Date.now();
    const retry = await rawCall(
      gateway.key,
      { ...call, requestState: first.result!.requestState, inputResponses: { r1: { action: "accept", content: {} } } },
      capabilities,
    );
    // The retry waits for the call's next step, and gets its end rather than waiting out its own 25 s.
    expect(Date.now() - answered).toBeLessThan(29_000);
    expect(retry.result ?? retry.error).toMatchObject({ isError: true });
    const rows = await eventually(
      () =>
        env.DB.prepare("SELECT outcome FROM calls WHERE workspace_id = ? AND kind = 'tools/call'")
          .bind(gateway.ws)
          .all<{ outcome: string }>()
          .then((found) => found.results),
      (found) => found.length > 0,
    );
    expect(rows).toEqual([{ outcome: "cancelled" }]);
    const seen = await eventually(
      () => upstreamReceived(`interactive-${gateway.tag}`),
      (received) => received.calls.some((one) => one.tool === "ask_then_wait:cancelled"),
    );
    expect(seen.calls.map((one) => one.tool)).toEqual(["ask_then_wait", "ask_then_wait:cancelled"]);
  }, 60_000);
});

describe("an approval asked in-band", () => {
  it("opens the approval's page as a URL-mode elicitation, and runs the call once when the retry finds it approved", async ({ expect }) => {
    const gateway = await demoGateway();
    const policy = await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    expect(policy.status).toBe(200);
    const client = await connectModern(gateway.clientKey, { elicitation: { url: {} } });
    const opened: { mode: string; url: string; message: string }[] = [];
    client.setRequestHandler("elicitation/create", async (request) => {
      const params = request.params as { mode: string; url: string; message: string };
      opened.push(params);
      // The user: the first time they close the page undecided, the second time an approver approves.
      if (opened.length === 2) {
        // The page is the console's view of the approval (`…/#/w/<ws>/approvals/<id>`); the approver decides there.
        const approvalId = decodeURIComponent(params.url.split("/").at(-1)!);
        const approved = await api(`/v1/workspaces/${gateway.ws}/approvals/${approvalId}/approve`, {
          method: "POST",
          key: gateway.adminKey,
        });
        expect(approved.status).toBe(200);
      }
      return { action: "accept" };
    });
    const result = await client.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect(result.content).toEqual([{ type: "text", text: "Deleted record r1" }]);
    expect(opened).toHaveLength(2);
    expect(opened[0]).toMatchObject({ mode: "url", url: expect.stringMatching(/\/#\/w\/[^/]+\/approvals\/[^/]+$/) });
    expect(opened[0]!.message).toContain("needs a human approval");
    expect(opened[1]!.url).toBe(opened[0]!.url);
    expect((await upstreamReceived(gateway.tag)).calls.map((call) => call.arguments)).toEqual([{ id: "r1" }]);
  });

  it("gives a client without URL-mode elicitation, and a user who declines, the approval_required result", async ({ expect }) => {
    const gateway = await demoGateway();
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    const formOnly = await connectModern(gateway.clientKey, { elicitation: { form: {} } });
    const held = await formOnly.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect((held._meta as Record<string, any>)["dev.rayrun/error"].code).toBe("approval_required");
    const declining = await connectModern(gateway.clientKey, { elicitation: { url: {} } });
    declining.setRequestHandler("elicitation/create", async () => ({ action: "decline" }));
    const declined = await declining.callTool({ name: "demo__delete_record", arguments: { id: "r1" } });
    expect((declined._meta as Record<string, any>)["dev.rayrun/error"].code).toBe("approval_required");
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });

  it("asks a retry that carries no answer for the approval again, and does not run the call", async ({ expect }) => {
    const gateway = await demoGateway();
    await api(`/v1/workspaces/${gateway.ws}/tools/${gateway.toolUid("delete_record")}/policy`, {
      method: "PUT",
      key: gateway.adminKey,
      body: { profileId: gateway.defaultProfileId, mode: "approval" },
    });
    const capabilities = { elicitation: { url: {} } };
    const call = { name: "demo__delete_record", arguments: { id: "r1" } };
    const first = await rawCall(gateway.clientKey, call, capabilities);
    expect(first.result).toMatchObject({ resultType: "input_required", inputRequests: { approval: { params: { mode: "url" } } } });
    const again = await rawCall(gateway.clientKey, { ...call, requestState: first.result!.requestState, inputResponses: {} }, capabilities);
    expect(again.result).toEqual({ ...first.result, requestState: expect.any(String) });
    expect((await upstreamReceived(gateway.tag)).calls).toEqual([]);
  });
});

describe("progress at 2026-07-28", () => {
  it("reaches a 2026-07-28 client under its own token while the call runs", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connectModern(gateway.key, {});
    const seen: number[] = [];
    const result = await client.callTool(
      { name: "live__slow_count", arguments: { seconds: 2, every: 0.5 } },
      { onprogress: (progress) => void seen.push(progress.progress) },
    );
    expect(result.isError).toBeFalsy();
    expect(seen.length).toBeGreaterThanOrEqual(3);
  });

  it("reaches the client in the rounds after an input request too, under the retry's token", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const client = await connectModern(gateway.key, { elicitation: { form: {} } });
    client.setRequestHandler("elicitation/create", async () => ({ action: "accept", content: { name: "Ada" } }));
    const seen: { progress: number; message?: string }[] = [];
    const result = await client.callTool(
      { name: "live__ask_then_count", arguments: { question: "Name?" } },
      { onprogress: (progress) => void seen.push({ progress: progress.progress, message: progress.message }) },
    );
    expect(text(result)).toBe("hello, Ada");
    // Step 1 came with the first round's input-required answer; 2 and 3 after the answer, with the retry's result.
    // (The v2 client also reports each round it fulfils as progress of its own: not the upstream's.)
    const upstreamSteps = seen.filter((update) => update.message?.startsWith("step "));
    expect(upstreamSteps).toEqual([
      { progress: 1, message: "step 1 of 3" },
      { progress: 2, message: "step 2 of 3" },
      { progress: 3, message: "step 3 of 3" },
    ]);
  });

  it("sends nothing for progress a retry did not ask for", async ({ expect }) => {
    const gateway = await interactiveGateway();
    const capabilities = { elicitation: { form: {} } };
    const first = await rawCall(gateway.key, { name: "live__ask_then_count", arguments: { question: "Name?" } }, capabilities);
    expect(first.result).toMatchObject({ resultType: "input_required" });
    const done = await rawCall(
      gateway.key,
      {
        name: "live__ask_then_count",
        arguments: { question: "Name?" },
        requestState: first.result.requestState,
        inputResponses: { r1: { action: "accept", content: { name: "Bo" } } },
      },
      capabilities,
    );
    // A plain JSON answer: no progress token was given, so no notification was owed before the result.
    expect(done.result).toMatchObject({ resultType: "complete", content: [{ type: "text", text: "hello, Bo" }] });
  });
});
