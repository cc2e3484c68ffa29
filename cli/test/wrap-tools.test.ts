// `run.wrapTools` on the tools agent SDKs hand it: the Vercel AI SDK's `tool({ ... })`
// driven by the real `ai` package's generateText loop, objects with `invoke`, and a
// session's `toolkit()`. Only the call is wrapped; every other field stays as it was.
import { generateText, isStepCount, jsonSchema, tool } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import { describe, it } from "vitest";
import { HookDenied, HookRun } from "../src/rules/index.ts";

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 5, text: 5, reasoning: 0 },
};

/** A model that calls `lookup`, then `wipe`, then answers: the AI SDK runs the tools between its turns. */
function scriptedModel() {
  return new MockLanguageModelV4({
    doGenerate: [
      {
        content: [
          { type: "tool-call", toolCallId: "call-1", toolName: "lookup", input: JSON.stringify({ email: "  a@b.test " }) },
          { type: "tool-call", toolCallId: "call-2", toolName: "wipe", input: JSON.stringify({ table: "users" }) },
        ],
        finishReason: { unified: "tool-calls", raw: undefined },
        usage,
        warnings: [],
      },
      { content: [{ type: "text", text: "done" }], finishReason: { unified: "stop", raw: undefined }, usage, warnings: [] },
    ],
  });
}

describe("run.wrapTools with agent SDK tool objects", () => {
  it("wraps the AI SDK's tool({ description, inputSchema, execute }) and the real generateText loop runs it through the rules", async ({
    expect,
  }) => {
    const run = new HookRun()
      .on("pre_tool_call", (event) => ({ decision: "rewrite", updated_input: { email: String(event.tool_input?.email).trim() } }), {
        matcher: "^lookup$",
        name: "trim",
      })
      .on("pre_tool_call", () => ({ decision: "deny", reason: "wiping is not allowed" }), { matcher: "^wipe$" })
      .on("post_tool_call", () => "checked", { name: "audit" });
    const calls: unknown[] = [];
    const lookup = tool({
      description: "Look a person up by email.",
      inputSchema: jsonSchema<{ email: string }>({ type: "object", properties: { email: { type: "string" } }, required: ["email"] }),
      execute: async (input, options) => {
        calls.push([input, options.toolCallId]);
        return { found: input.email };
      },
    });
    const wipe = tool({
      description: "Delete a table.",
      inputSchema: jsonSchema<{ table: string }>({ type: "object", properties: { table: { type: "string" } } }),
      execute: async () => "wiped",
    });
    const tools = run.wrapTools({ lookup, wipe });
    // Every field but execute is the original's.
    expect(tools.lookup.description).toBe(lookup.description);
    expect(tools.lookup.inputSchema).toBe(lookup.inputSchema);
    expect(tools.lookup.execute).not.toBe(lookup.execute);

    const model = scriptedModel();
    const result = await generateText({ model, tools, prompt: "find a@b.test", stopWhen: isStepCount(3) });
    expect(result.text).toBe("done");
    // The AI SDK told the model of the wrapped tools exactly as of the originals.
    expect(
      model.doGenerateCalls[0]!.tools?.map((definition) => [definition.name, "description" in definition && definition.description]),
    ).toEqual([
      ["lookup", "Look a person up by email."],
      ["wipe", "Delete a table."],
    ]);
    expect(calls).toEqual([[{ email: "a@b.test" }, "call-1"]]);
    const [first] = result.steps;
    expect(first!.toolResults.map((part) => [part.toolName, part.output])).toEqual([
      ["lookup", { found: "a@b.test", hook_context: ["[hook audit] checked"] }],
    ]);
    const errors = first!.content.filter((part) => part.type === "tool-error");
    expect(errors.map((part) => [part.toolName, part.error instanceof HookDenied, (part.error as Error).message])).toEqual([
      ["wipe", true, "denied: wiping is not allowed"],
    ]);
    expect(run.summary()).toMatchObject({ calls: 2, denied: 1, rewritten: 1 });
  });

  it("wraps an object's invoke and keeps its class, fields and other methods", async ({ expect }) => {
    class Search {
      readonly name = "search";
      #hits = 0;
      async invoke(input: { q: string }) {
        this.#hits++;
        return { q: input.q, hits: this.#hits };
      }
      describe() {
        return `${this.name}: ${this.#hits} call(s)`;
      }
    }
    const original = new Search();
    const run = new HookRun().on("post_tool_call", (event) => ({
      decision: "rewrite",
      updated_result: { ...(event.tool_result as object), seen: true },
    }));
    const { search } = run.wrapTools({ search: original });
    expect(search).toBeInstanceOf(Search);
    expect(search.name).toBe("search");
    expect(await search.invoke({ q: "x" })).toEqual({ q: "x", hits: 1, seen: true });
    expect(original.describe()).toBe("search: 1 call(s)");
    expect(() => run.wrapTools({ nothing: { description: "no call" } as never })).toThrow(
      /nothing is not a function, nor an object with an execute or invoke function/,
    );
  });

  it("puts the rules on a session's toolkit(): a { impls } toolkit keeps its other fields, a plain map is wrapped whole", async ({
    expect,
  }) => {
    const run = new HookRun().on("pre_tool_call", () => ({ decision: "deny", reason: "read-only session" }), { matcher: "^delete_" });
    const definitions = [{ name: "get_record" }, { name: "delete_record" }];
    const session = {
      toolkit: async () => ({
        definitions,
        impls: { get_record: async (input: { id: string }) => ({ id: input.id }), delete_record: async () => "deleted" },
      }),
    };
    const kit = (await run.session(session, { vendor: "world" }).toolkit()) as {
      definitions: unknown;
      impls: Record<string, (input: object) => Promise<unknown>>;
    };
    expect(kit.definitions).toBe(definitions);
    expect(await kit.impls.get_record!({ id: "r1" })).toEqual({ id: "r1" });
    await expect(kit.impls.delete_record!({ id: "r1" })).rejects.toBeInstanceOf(HookDenied);
    const plain = (await run.session({ toolkit: () => ({ delete_all: async () => "gone" }) }).toolkit()) as Record<
      string,
      () => Promise<unknown>
    >;
    await expect(plain.delete_all!()).rejects.toMatchObject({ reason: "read-only session" });
    await expect(run.session({}).toolkit()).rejects.toThrow("this session has no toolkit()");
  });
});
