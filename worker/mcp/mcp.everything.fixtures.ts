import { inject } from "vitest";
import { addService, api, createKey, createWorkspace } from "../../test/helpers.ts";

/** What the tests with server-everything behind the gateway share: its workspace, and a hook on its task-only tool. */

export const RESEARCH = "every__simulate-research-query";

/** The reference server `@modelcontextprotocol/server-everything` (test/everything.ts), as it ships, behind the gateway. */
export async function everythingGateway() {
  const ws = await createWorkspace();
  await addService(ws, { slug: "every", url: `${inject("everythingOrigin")}/mcp` });
  const key = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  return { ...ws, key };
}

/** Rewrites the topic before the task is created, and marks the result it returns. */
export const RESEARCH_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { ...args, topic: "hooked " + args.topic } };
  },
  after({ result }) {
    return { action: "return", result: { content: [{ type: "text", text: "after saw " + result.content.length + " blocks" }, ...result.content] } };
  },
});
`;

/** Saves, tests both stages, creates a revision of `source` for the tool, and deploys it active. */
export async function deployHook(gateway: Awaited<ReturnType<typeof everythingGateway>>, toolName: string, source: string) {
  const tools = (await api(`/v1/workspaces/${gateway.ws}/tools`, { key: gateway.adminKey })).body.tools as { uid: string; name: string }[];
  const uid = tools.find((tool) => tool.name === toolName)!.uid;
  const writer = await createKey(gateway, ["hooks:write", "hooks:read"]);
  const base = `/v1/workspaces/${gateway.ws}/tools/${uid}/hook`;
  const draft = await api(`${base}/draft`, { key: writer });
  const saved = await api(`${base}/draft`, {
    method: "PUT",
    key: writer,
    body: { source, config: {} },
    headers: draft.body.etag ? { "if-match": draft.body.etag } : {},
  });
  if (saved.status !== 200) throw new Error(`save: ${JSON.stringify(saved.body)}`);
  const before = await api(`${base}/test`, { key: writer, body: { stage: "before", arguments: { topic: "t" } } });
  const after = await api(`${base}/test`, {
    key: writer,
    body: { stage: "after", arguments: { topic: "t" }, result: { content: [{ type: "text", text: "r" }] } },
  });
  if (!before.body.passed || !after.body.passed) throw new Error(`tests: ${JSON.stringify([before.body, after.body])}`);
  const revision = await api(`${base}/revisions`, { key: writer, body: { versionId: saved.body.versionId } });
  const deployed = await api(`${base}/deployments/active`, { method: "PUT", key: writer, body: { revisionId: revision.body.revisionId } });
  if (deployed.status !== 200) throw new Error(`deploy: ${JSON.stringify(deployed.body)}`);
}
