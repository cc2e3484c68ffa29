import { describe, it } from "vitest";
import { api, fixtureGateway, gatewayError } from "../../test/helpers.ts";
import { HOSTILE_NAMES, INVALID_HOSTILE_NAMES } from "./tool-name.fixtures.ts";

/** A workspace indexing the upstream with odd tool names as service `names`, with a client connected over /mcp. */
const namesGateway = () => fixtureGateway("names", "hostile-names");

describe("upstream tool names MCP does not allow", () => {
  it("are indexed and named to the admin, hidden from clients, and refused tool_name_invalid when called", async ({ expect }) => {
    const gateway = await namesGateway();
    const index = gateway.created.index as { added: string[]; invalidNames: string[] };
    expect([index.added.length, index.invalidNames]).toEqual([HOSTILE_NAMES.length, INVALID_HOSTILE_NAMES]);

    const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as {
      name: string;
      nameProblem: string | null;
    }[];
    const problems = new Map(tools.map((tool) => [tool.name, tool.nameProblem]));
    expect(problems.get("a b/../<script>")).toBe(
      "its public name holds characters MCP tool names may not have (only A–Z, a–z, 0–9, _, - and .)",
    );
    expect(problems.get("")).toBe("the upstream gave it no name");
    expect(problems.get("x".repeat(122))).toBe("its public name is 129 characters long; MCP tool names have at most 128");
    expect([problems.get("plain"), problems.get("dotted.name"), problems.get("y".repeat(121))]).toEqual([null, null, null]);

    // One name a model API cannot take would fail a client's whole tool list: only the valid ones are offered.
    const listed = (await gateway.client.listTools()).tools.map((tool) => tool.name).sort();
    expect(listed).toEqual(["names__dotted.name", "names__plain", `names__${"y".repeat(121)}`]);

    const refused = await gateway.client.callTool({ name: "names__a b/../<script>", arguments: {} });
    expect([refused.isError, gatewayError(refused)]).toEqual([
      true,
      expect.objectContaining({
        code: "tool_name_invalid",
        message:
          "names__a b/../<script> cannot be offered to MCP clients: its public name holds characters MCP tool names may not have (only A–Z, a–z, 0–9, _, - and .)",
      }),
    ]);
    const called = await gateway.client.callTool({ name: "names__dotted.name", arguments: {} });
    expect(called.isError).toBeFalsy();

    // A refresh names them again, and changes nothing.
    const refresh = await api(`/v1/workspaces/${gateway.ws}/services/${gateway.created.service.id}/refresh`, {
      method: "POST",
      key: gateway.adminKey,
    });
    expect([refresh.status, refresh.body.invalidNames, refresh.body.unchanged]).toEqual([200, INVALID_HOSTILE_NAMES, HOSTILE_NAMES.length]);
  });
});
