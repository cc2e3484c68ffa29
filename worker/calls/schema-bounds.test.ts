import { describe, it } from "vitest";
import { api, fixtureGateway, gatewayError } from "../../test/helpers.ts";
import { evilPatternSubject, uniqueItemsArguments } from "../lib/schema-bounds.fixtures.ts";
import { VALUE_LIMITS } from "../lib/schema-bounds.ts";

/** A workspace indexing the hostile upstream as service `hostile`, with a client connected over /mcp. */
const hostileGateway = () => fixtureGateway("hostile", "hostile-schemas");

describe("upstream JSON Schemas are validated with bounded work", () => {
  it("indexes every tool, names the ones past a bound, and hides them from discovery", async ({ expect }) => {
    const gateway = await hostileGateway();
    const index = gateway.created.index as { added: string[]; schemaTooComplex: { name: string; bound: string }[] };
    expect(index.added).toHaveLength(5);
    expect(index.schemaTooComplex).toEqual([
      { name: "backreference_pattern", bound: "pattern" },
      { name: "anyof_chain", bound: "branching" },
    ]);
    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as Record<string, any>[];
    const chain = tools.find((tool) => tool.name === "anyof_chain")!;
    expect(chain.status).toBe("active");
    expect(chain.schemaBreach).toMatchObject({ bound: "branching", limit: 1_000 });
    expect(tools.find((tool) => tool.name === "evil_input_pattern")!.schemaBreach).toBeNull();

    // A refresh of the same upstream succeeds too: the bound marks tools, it never fails the service.
    const refresh = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.created.service.id}/refresh`, {
      method: "POST",
      key: gateway.adminKey,
    });
    expect(refresh.status).toBe(200);
    expect(refresh.body.schemaTooComplex).toHaveLength(2);

    const listed = (await gateway.client.listTools()).tools.map((tool) => tool.name).sort();
    expect(listed).toEqual(["hostile__evil_input_pattern", "hostile__evil_output_pattern", "hostile__unique_items"]);
  });

  it("refuses a 22-level anyOf chain through $defs as schema_too_complex (branching) instead of validating 2^22 times", async ({
    expect,
  }) => {
    const { client } = await hostileGateway();
    const result = await client.callTool({ name: "hostile__anyof_chain", arguments: { value: "x" } });
    expect(result.isError).toBe(true);
    expect(gatewayError(result)).toMatchObject({
      code: "schema_too_complex",
      details: { tool: "hostile__anyof_chain", bound: "branching", limit: 1_000 },
    });
  });

  it("refuses a pattern no linear-time matcher can run (a backreference) as schema_too_complex (pattern)", async ({ expect }) => {
    const { client } = await hostileGateway();
    const result = await client.callTool({ name: "hostile__backreference_pattern", arguments: { text: "aa" } });
    expect(gatewayError(result)).toMatchObject({ code: "schema_too_complex", details: { bound: "pattern" } });
  });

  it("matches ^(a+)+$ on input in linear time: the hostile string is simply invalid, a matching one goes through", async ({ expect }) => {
    const { client } = await hostileGateway();
    const hostile = await client.callTool({ name: "hostile__evil_input_pattern", arguments: { text: evilPatternSubject(40) } });
    expect(gatewayError(hostile)).toMatchObject({ code: "invalid_arguments", details: { violations: [{ pointer: "/text" }] } });
    const fine = await client.callTool({ name: "hostile__evil_input_pattern", arguments: { text: "aaaa" } });
    expect(fine.isError).toBeFalsy();
    expect(fine.structuredContent).toEqual({ text: "aaaa" });
  });

  it("matches ^(a+)+$ on the upstream's output in linear time", async ({ expect }) => {
    const { client } = await hostileGateway();
    const result = await client.callTool({ name: "hostile__evil_output_pattern", arguments: { text: evilPatternSubject(40) } });
    expect(gatewayError(result)).toMatchObject({ code: "invalid_output", details: { violations: [{ pointer: "/text" }] } });
  });

  it("stops pattern matching past its step budget with schema_too_complex (pattern_work)", async ({ expect }) => {
    const { client } = await hostileGateway();
    const result = await client.callTool({ name: "hostile__evil_input_pattern", arguments: { text: "a".repeat(600_000) } });
    expect(gatewayError(result)).toMatchObject({
      code: "schema_too_complex",
      details: { bound: "pattern_work", limit: VALUE_LIMITS.patternWork },
    });
  });

  it("refuses uniqueItems over 30,000 items as schema_too_complex (unique_items) and checks arrays under the cap", async ({ expect }) => {
    const { client } = await hostileGateway();
    const big = await client.callTool({ name: "hostile__unique_items", arguments: uniqueItemsArguments(30_000) });
    expect(gatewayError(big)).toMatchObject({
      code: "schema_too_complex",
      details: { bound: "unique_items", limit: VALUE_LIMITS.uniqueItems },
    });
    const duplicate = await client.callTool({ name: "hostile__unique_items", arguments: { ids: [1, 2, 1] } });
    expect(gatewayError(duplicate)).toMatchObject({ code: "invalid_arguments" });
    const fine = await client.callTool({ name: "hostile__unique_items", arguments: uniqueItemsArguments(VALUE_LIMITS.uniqueItems) });
    expect(fine.isError).toBeFalsy();
  });
});

describe("upstream tool definitions of any nesting", () => {
  // 3,000 levels: within what JSON reads and writes, past what a recursive walk of the definition survives.
  it("indexes and refreshes a tool whose _meta nests 3,000 levels, instead of answering 500", async ({ expect }) => {
    const gateway = await fixtureGateway("deep", "deep/meta/3000");
    expect(gateway.created.index).toMatchObject({ added: ["deep"] });
    const refresh = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.created.service.id}/refresh`, {
      method: "POST",
      key: gateway.adminKey,
    });
    expect(refresh.status).toBe(200);
    expect((await gateway.client.listTools()).tools.map((tool) => tool.name)).toEqual(["deep__deep"]);
    expect((await gateway.client.callTool({ name: "deep__deep", arguments: {} })).content).toEqual([{ type: "text", text: "deep" }]);
  });

  // 100,000 levels, sent as text: past what Node's JSON.stringify or the SDK could write, still JSON the gateway reads.
  it("indexes a tool whose _meta nests 100,000 levels, and passes on a result nested as deep", async ({ expect }) => {
    const meta = await fixtureGateway("deep", "deep-text/meta/100000");
    expect(meta.created.index).toMatchObject({ added: ["deep"] });
    expect((await meta.client.callTool({ name: "deep__deep", arguments: {} })).content).toEqual([{ type: "text", text: "deep" }]);

    const result = await fixtureGateway("deep", "deep-text/result/100000");
    const called = await result.client.callTool({ name: "deep__deep", arguments: {} });
    let depth = 0;
    for (let level: unknown = called.structuredContent; level && typeof level === "object"; level = (level as { a?: unknown }).a) depth++;
    expect(depth).toBe(100_000);
  });

  it("indexes a tool whose input schema nests 1,500 levels as past the depth bound, and refuses its calls", async ({ expect }) => {
    const gateway = await fixtureGateway("deep", "deep/schema/1500");
    expect(gateway.created.index).toMatchObject({ added: ["deep"], schemaTooComplex: [{ name: "deep", bound: "depth" }] });
    const result = await gateway.client.callTool({ name: "deep__deep", arguments: {} });
    expect(gatewayError(result)).toMatchObject({ code: "schema_too_complex", details: { bound: "depth" } });
  });
});
