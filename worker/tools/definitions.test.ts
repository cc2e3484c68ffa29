import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { addService, api, createWorkspace, upstreamOrigin } from "../../test/helpers.ts";
import { definitionHash, type ToolDefinition } from "./tools.store.ts";

/**
 * Puts the stored tool back as the gateway stored it before it kept icons,
 * execution and _meta: the definition without them, approved under its hash.
 */
async function storeAsBeforeIssue13(toolUid: string): Promise<string> {
  const row = await env.DB.prepare("SELECT definition FROM tools WHERE uid = ?").bind(toolUid).first<{ definition: string }>();
  const { icons: _icons, execution: _execution, _meta, ...legacy } = JSON.parse(row!.definition) as ToolDefinition;
  const hash = await definitionHash(legacy);
  await env.DB.prepare("UPDATE tools SET definition = ?, definition_hash = ?, approved_hash = ? WHERE uid = ?")
    .bind(JSON.stringify(legacy), hash, hash, toolUid)
    .run();
  return hash;
}

describe("definitions approved before the gateway kept icons, execution and _meta", () => {
  it("carry their approval over on refresh instead of going back to review", async ({ expect }) => {
    const workspace = await createWorkspace();
    const { service } = await addService(workspace, { slug: "rich", url: `${upstreamOrigin()}/fixtures/rich/mcp` });
    const toolsPath = `/v1/workspaces/${workspace.ws}/tools`;
    const [tool] = (await api(toolsPath, { key: workspace.adminKey })).body.tools as { uid: string; definitionHash: string }[];
    const fullHash = tool!.definitionHash;
    const legacyHash = await storeAsBeforeIssue13(tool!.uid);
    expect(legacyHash).not.toBe(fullHash);

    const refresh = await api(`/v1/workspaces/${workspace.ws}/services/${service.id}/refresh`, { method: "POST", key: workspace.adminKey });
    expect(refresh.status).toBe(200);
    expect(refresh.body.changed).toEqual(["find_file"]);
    const [after] = (await api(toolsPath, { key: workspace.adminKey })).body.tools as Record<string, unknown>[];
    expect(after).toMatchObject({ status: "active", definitionHash: fullHash });
    expect((after!.definition as ToolDefinition).icons).toEqual([
      { src: "https://example.com/file.png", mimeType: "image/png", sizes: ["48x48"] },
    ]);
  });

  it("still go to review when something the admin approved changed too", async ({ expect }) => {
    const workspace = await createWorkspace();
    const { service } = await addService(workspace, { slug: "rich", url: `${upstreamOrigin()}/fixtures/rich/mcp` });
    const toolsPath = `/v1/workspaces/${workspace.ws}/tools`;
    const [tool] = (await api(toolsPath, { key: workspace.adminKey })).body.tools as { uid: string }[];
    await storeAsBeforeIssue13(tool!.uid);
    // The approved description differs from what the upstream now sends.
    const row = await env.DB.prepare("SELECT definition FROM tools WHERE uid = ?").bind(tool!.uid).first<{ definition: string }>();
    const approved = { ...(JSON.parse(row!.definition) as ToolDefinition), description: "An older description." };
    const hash = await definitionHash(approved);
    await env.DB.prepare("UPDATE tools SET definition = ?, definition_hash = ?, approved_hash = ? WHERE uid = ?")
      .bind(JSON.stringify(approved), hash, hash, tool!.uid)
      .run();

    await api(`/v1/workspaces/${workspace.ws}/services/${service.id}/refresh`, { method: "POST", key: workspace.adminKey });
    const [after] = (await api(toolsPath, { key: workspace.adminKey })).body.tools as Record<string, unknown>[];
    expect(after).toMatchObject({ status: "review_required" });
  });
});
