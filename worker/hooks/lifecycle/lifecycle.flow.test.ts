import { describe, it } from "vitest";
import { api, connectMcp, createKey, upstreamReceived } from "../../../test/helpers.ts";
import { browserCaller, hookGateway, keyCaller, MOCK_RESULT, SEARCH_HOOK, searchHookVariant } from "./lifecycle.fixtures.ts";

describe("hook lifecycle, whole path", () => {
  it("takes a hook from draft to active and back, attributing every change to its actor and channel", async ({ expect }) => {
    const g = await hookGateway();
    const browser = await browserCaller(g.ws, g.adminKey, "editor");
    const apiKey = await createKey(g, ["hooks:write"]);
    const api_ = keyCaller(apiKey);
    const cli = keyCaller(await createKey(g, ["hooks:write"]), true);
    const keyIds = (await api(`/v1/workspaces/${g.ws}/keys`, { key: g.adminKey })).body.keys as { id: string; prefix: string }[];
    const idOf = (secret: string) => keyIds.find((key) => secret.startsWith(key.prefix))!.id;
    const apiKeyId = idOf(apiKey);
    const cliKeyId = idOf(cli.headers.authorization!.slice(7));

    // An empty draft to start from.
    const empty = await g.draft(browser);
    expect(empty.status).toBe(200);
    expect(empty.body).toEqual({ source: "", config: {}, etag: '"empty"', versionId: null });
    expect(empty.headers.get("etag")).toBe('"empty"');

    // 1. The browser saves unformatted source: it is stored formatted.
    const messy = SEARCH_HOOK.replaceAll("  ", "").replace('"rayrun.hooks/v1"', "'rayrun.hooks/v1'");
    const first = await g.save({ source: messy, config: { prefix: "" }, note: "first cut" }, empty.body.etag, browser);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ created: true, versionId: expect.stringMatching(/^hv_/) });
    expect(first.headers.get("etag")).toBe(first.body.etag);
    const stored = (await g.draft(browser)).body;
    expect(stored.source).toBe(SEARCH_HOOK);
    expect(stored.etag).toBe(first.body.etag);

    // 2. The same content again (even unformatted) is a no-op: same version, same etag, no quota.
    const again = await g.save({ source: messy, config: { prefix: "" } }, first.body.etag, api_);
    expect(again.status).toBe(200);
    expect(again.body).toEqual({ etag: first.body.etag, versionId: first.body.versionId, created: false, formatted: true });
    expect((await g.call(g.writer, `/v1/workspaces/${g.ws}/hooks/usage`)).body.draftSaves.used).toBe(1);

    // 3. The API key changes the config: a second version.
    const second = await g.save({ source: SEARCH_HOOK, config: { prefix: "release " }, note: "prefix" }, first.body.etag, api_);
    expect(second.body.created).toBe(true);

    // 4. Tests: before and after, against the draft; nothing reaches the upstream.
    const before = await g.test({ stage: "before", arguments: { query: "sso" } }, api_);
    expect(before.status).toBe(200);
    expect(before.body).toMatchObject({
      passed: true,
      outcome: "continue",
      value: { action: "continue", arguments: { query: "release sso" } },
      logs: [{ level: "info", message: "searching", data: { query: "sso" } }],
      validation: {
        valid: true,
        checks: [
          { target: "publicArguments", valid: true },
          { target: "upstreamArguments", valid: true },
        ],
      },
    });
    const after = await g.test({ stage: "after", arguments: { query: "sso" }, result: MOCK_RESULT }, api_);
    expect(after.body).toMatchObject({
      passed: true,
      outcome: "return",
      value: { action: "return", result: { items: [MOCK_RESULT.items[0]] } },
      validation: {
        valid: true,
        checks: [
          { target: "upstreamResult", valid: true },
          { target: "publicResult", valid: true },
        ],
      },
    });
    expect((await upstreamReceived(g.tag)).calls).toEqual([]);

    // 5. A revision from the tested version, by the CLI.
    const revA = await g.createRevision(second.body.versionId, cli);
    expect(revA.status).toBe(201);
    expect(revA.body).toMatchObject({
      revisionId: expect.stringMatching(/^rev_/),
      versionId: second.body.versionId,
      stages: ["before", "after"],
      config: { prefix: "release " },
      definitionHash: g.tools.find((tool) => tool.uid === g.toolUid)!.definitionHash,
      bundleKey: `bundles/${g.ws}/${g.toolUid}/${revA.body.revisionId}.js`,
      createdBy: cliKeyId,
      channel: "cli",
    });

    // A second revision (another version, tested by the browser user) to roll back from.
    const third = await g.save({ source: searchHookVariant(1), config: { prefix: "release " } }, second.body.etag, browser);
    await g.testBoth(undefined, browser);
    const revB = await g.createRevision(third.body.versionId, browser);
    expect(revB.status).toBe(201);
    expect(revB.body).toMatchObject({ createdBy: browser.id, channel: "browser" });

    // 6. Shadow first, then promote to active (browser), deploy B, roll back to A (cli).
    expect((await g.deploy("shadow", revA.body.revisionId, api_)).status).toBe(200);
    const promoted = await g.deploy("active", revA.body.revisionId, browser);
    expect(promoted.body.event).toMatchObject({ action: "promote", slot: "active", actorId: browser.id, channel: "browser" });
    expect((await g.deploy("active", revB.body.revisionId, api_)).body.event).toMatchObject({
      action: "deploy",
      previousRevisionId: revA.body.revisionId,
    });
    const rolledBack = await g.deploy("active", revA.body.revisionId, cli);
    expect(rolledBack.status).toBe(200);
    expect(rolledBack.body.event).toMatchObject({
      action: "rollback",
      revisionId: revA.body.revisionId,
      previousRevisionId: revB.body.revisionId,
      actorId: cliKeyId,
      channel: "cli",
    });
    const removed = await g.call(api_, `${g.base()}/deployments/shadow`, { method: "DELETE" });
    expect(removed.body.event).toMatchObject({
      action: "remove",
      slot: "shadow",
      previousRevisionId: revA.body.revisionId,
      actorId: apiKeyId,
    });
    const deployments = (await g.call(browser, `${g.base()}/deployments`)).body;
    expect(deployments.active).toMatchObject({
      revisionId: revA.body.revisionId,
      config: { prefix: "release " },
      stages: ["before", "after"],
    });
    expect(deployments.shadow).toBeNull();
    expect(deployments.events.map((event: { action: string; slot: string }) => `${event.action}:${event.slot}`)).toEqual([
      "remove:shadow",
      "rollback:active",
      "deploy:active",
      "promote:active",
      "deploy:shadow",
    ]);

    // 7. History: newest first, attributed; diff with the predecessor; restore under If-Match.
    const history = (await g.call(browser, `${g.base()}/versions`)).body;
    expect(
      history.versions.map((version: { actorId: string; channel: string; note: string | null }) => [version.channel, version.note]),
    ).toEqual([
      ["browser", null],
      ["api", "prefix"],
      ["browser", "first cut"],
    ]);
    expect(history.versions[1].actorId).toBe(apiKeyId);
    expect(history.versions[0].actorId).toBe(browser.id);
    const diff = (await g.call(browser, `${g.base()}/versions/${second.body.versionId}/diff`)).body;
    expect(diff.previousVersionId).toBe(first.body.versionId);
    expect(diff.source).not.toContain("@@");
    expect(diff.config).toContain('-  "prefix": ""');
    expect(diff.config).toContain('+  "prefix": "release "');
    const restored = await g.call(cli, `${g.base()}/versions/${first.body.versionId}/restore`, {
      body: { note: "back to the first cut" },
      headers: { "if-match": third.body.etag },
    });
    expect(restored.status).toBe(200);
    expect(restored.body.created).toBe(true);
    const restoredVersion = (await g.call(browser, `${g.base()}/versions/${restored.body.versionId}`)).body;
    expect(restoredVersion).toMatchObject({
      source: SEARCH_HOOK,
      config: { prefix: "" },
      restoredFrom: first.body.versionId,
      actorId: cliKeyId,
      channel: "cli",
      note: "back to the first cut",
    });
    expect((await g.call(browser, `${g.base()}/versions`)).body.versions).toHaveLength(4);

    // 8. Export, then reset: everything goes but the reset event; calls run without a hook.
    const exported = await g.call(browser, `${g.base()}/export`);
    expect(exported.status).toBe(200);
    expect(exported.body.versions.map((version: { versionId: string }) => version.versionId)).toEqual([
      first.body.versionId,
      second.body.versionId,
      third.body.versionId,
      restored.body.versionId,
    ]);
    const reset = await g.call(browser, g.base(), { method: "DELETE" });
    expect(reset.status).toBe(200);
    expect(reset.body.reset).toMatchObject({
      actorId: browser.id,
      actorKind: "user",
      channel: "browser",
      versionsRemoved: 4,
      revisionsRemoved: 2,
      bundlesRemoved: 2,
    });
    expect((await g.draft(browser)).body).toEqual(empty.body);
    expect((await g.call(browser, `${g.base()}/versions`)).body.versions).toEqual([]);
    expect((await g.call(browser, `${g.base()}/deployments`)).body).toEqual({ active: null, shadow: null, events: [] });
    expect((await g.call(browser, `${g.base()}/resets`)).body.resets).toEqual([reset.body.reset]);

    const client = await connectMcp(g.clientKey);
    const result = await client.callTool({ name: "demo__search_release_notes", arguments: { query: "sso" } });
    expect(result.isError).toBeFalsy();
    expect((await upstreamReceived(g.tag)).calls.map((call) => call.arguments)).toEqual([{ query: "sso" }]);
  });
});

describe("hook API contract", () => {
  it("publishes every hook route in the OpenAPI document", async ({ expect }) => {
    const res = await api("/v1/openapi.json");
    expect(res.status).toBe(200);
    const hook = "/v1/workspaces/{ws}/tools/{toolUid}/hook";
    // Every operation on a hook path (the tool's hook, workspace hook usage, a service's hook history), exactly.
    const hookOperations = Object.entries(res.body.paths as Record<string, Record<string, unknown>>)
      .filter(([path]) => /\/hooks?[/-]|\/hook$/.test(path))
      .flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`))
      .sort();
    expect(hookOperations).toEqual([
      `DELETE ${hook}`,
      `DELETE ${hook}/deployments/{slot}`,
      "GET /v1/workspaces/{ws}/hooks/usage",
      "GET /v1/workspaces/{ws}/services/{svc}/hook-history",
      `GET ${hook}/deployments`,
      `GET ${hook}/draft`,
      `GET ${hook}/export`,
      `GET ${hook}/logs`,
      `GET ${hook}/resets`,
      `GET ${hook}/revisions`,
      `GET ${hook}/types`,
      `GET ${hook}/versions`,
      `GET ${hook}/versions/{versionId}`,
      `GET ${hook}/versions/{versionId}/diff`,
      `POST ${hook}/compile`,
      `POST ${hook}/revisions`,
      `POST ${hook}/test`,
      `POST ${hook}/versions/{versionId}/restore`,
      `PUT ${hook}/deployments/{slot}`,
      `PUT ${hook}/draft`,
    ]);
    const put = res.body.paths[`${hook}/draft`].put;
    expect(put.parameters).toEqual(expect.arrayContaining([expect.objectContaining({ name: "if-match", in: "header" })]));
    expect(put.responses["412"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
  });
});
