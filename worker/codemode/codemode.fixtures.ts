import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { addService, api, connectMcp, demoGateway, newTag, upstreamOrigin } from "../../test/helpers.ts";

/** Test fixtures shared by the Code Mode test files. */

export type Client = Awaited<ReturnType<typeof connectMcp>>;

/** A demo gateway whose default profile is in Code Mode, with a `slow` service (tool `wait`), and a tools:call-only client. */
export async function codeGateway() {
  const gateway = await demoGateway();
  const slowTag = newTag();
  await addService(gateway, { slug: "slow", url: `${upstreamOrigin()}/fixtures/slow/${slowTag}/mcp` });
  const patched = await api(`/v1/workspaces/${gateway.ws}/profiles/${gateway.defaultProfileId}`, {
    method: "PATCH",
    key: gateway.adminKey,
    body: { discovery: "code" },
  });
  if (patched.status !== 200) throw new Error(`profile: ${patched.status}`);
  const client = await connectMcp(gateway.clientKey);
  return { ...gateway, client, slowTag: `slow-${slowTag}` };
}

/** Calls `run_code` with `code`. */
export const run = async (client: Client, code: string) =>
  (await client.callTool({ name: "run_code", arguments: { code } })) as CallToolResult;
