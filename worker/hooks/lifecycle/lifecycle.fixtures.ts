import { api, CONSOLE_HEADERS, createKey, demoGateway, devLogin, type ApiResponse } from "../../../test/helpers.ts";

/**
 * A hook for the demo upstream's `search_release_notes` (input `{ query }`,
 * output `{ items }`): before prefixes the query from config, after keeps the first item.
 */
export const SEARCH_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args, context }) {
    context.log.info("searching", { query: args.query });
    const prefix = String(context.config.prefix ?? "");
    return { action: "continue", arguments: { query: prefix + args.query } };
  },
  after({ result }) {
    return { action: "return", result: { items: result.items.slice(0, 1) } };
  },
});
`;

/** The same hook with a different comment, so it saves as a new version that compiles the same. */
export const searchHookVariant = (n: number) => `// variant ${n}\n${SEARCH_HOOK}`;

/** A before-only hook whose transformed arguments break the upstream schema (query must be a string). */
export const BAD_ARGUMENTS_HOOK = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { query: 42 } };
  },
});
`;

export const MOCK_RESULT = {
  items: [
    { version: "2.2.0", date: "2026-05-11", title: "SSO", summary: "SAML single sign-on for enterprise plans." },
    { version: "2.4.0", date: "2026-10-02", title: "Faster search", summary: "Search results now stream in under 50 ms." },
  ],
};

export interface Caller {
  /** What the API records as the actor id. */
  id?: string;
  headers: Record<string, string>;
}

/** A browser member logged in through the dev login (channel `browser`). */
export async function browserCaller(ws: string, adminKey: string, role: "admin" | "editor" | "viewer" = "editor"): Promise<Caller> {
  const email = `${crypto.randomUUID().slice(0, 8)}@rayrun.test`;
  const member = await api(`/v1/workspaces/${ws}/members`, { method: "PUT", key: adminKey, body: { email, role } });
  if (member.status !== 200) throw new Error(`member: ${member.status} ${JSON.stringify(member.body)}`);
  // The console's browser sends its own origin with every request it makes.
  return { id: member.body.id, headers: { cookie: await devLogin(email), ...CONSOLE_HEADERS } };
}

export const keyCaller = (key: string, cli = false): Caller => ({
  headers: { authorization: `Bearer ${key}`, ...(cli ? { "x-rayrun-client": "rayrun-cli" } : {}) },
});

/** A demo gateway plus helpers bound to one tool's hook routes. */
export async function hookGateway(toolName = "search_release_notes") {
  const gateway = await demoGateway();
  const toolUid = gateway.toolUid(toolName);
  const writerKey = await createKey(gateway, ["hooks:write", "hooks:read"]);
  const writer = keyCaller(writerKey);
  const base = (uid = toolUid) => `/v1/workspaces/${gateway.ws}/tools/${uid}/hook`;

  const call = <T = any>(caller: Caller, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    api<T>(path, { method: init.method, body: init.body, headers: { ...caller.headers, ...init.headers } });

  const draft = (caller = writer, uid = toolUid) => call(caller, `${base(uid)}/draft`);
  const save = (
    body: { source: string; config?: Record<string, unknown>; note?: string },
    etag: string | undefined,
    caller = writer,
    uid = toolUid,
  ): Promise<ApiResponse> =>
    call(caller, `${base(uid)}/draft`, { method: "PUT", body, headers: etag === undefined ? {} : { "if-match": etag } });

  /** Saves on top of whatever the draft is now. */
  const saveLatest = async (body: { source: string; config?: Record<string, unknown>; note?: string }, caller = writer, uid = toolUid) =>
    save(body, (await draft(caller, uid)).body.etag, caller, uid);

  const test = (body: Record<string, unknown>, caller = writer, uid = toolUid) => call(caller, `${base(uid)}/test`, { body });
  const testBoth = async (config?: Record<string, unknown>, caller = writer, uid = toolUid) => {
    const before = await test({ stage: "before", arguments: { query: "sso" }, ...(config ? { config } : {}) }, caller, uid);
    const after = await test(
      { stage: "after", arguments: { query: "sso" }, result: MOCK_RESULT, ...(config ? { config } : {}) },
      caller,
      uid,
    );
    return { before, after };
  };
  const createRevision = (versionId: string, caller = writer, uid = toolUid) =>
    call(caller, `${base(uid)}/revisions`, { body: { versionId } });
  const deploy = (slot: "active" | "shadow", revisionId: string, caller = writer, uid = toolUid) =>
    call(caller, `${base(uid)}/deployments/${slot}`, { method: "PUT", body: { revisionId } });

  /** Save, test both stages, create a revision: the shortest way to a deployable revision. */
  const tested = async (source = SEARCH_HOOK, config: Record<string, unknown> = {}, uid = toolUid) => {
    const saved = await saveLatest({ source, config }, writer, uid);
    if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`);
    const runs = await testBoth(undefined, writer, uid);
    if (!runs.before.body.passed || !runs.after.body.passed) throw new Error(`tests: ${JSON.stringify(runs)}`);
    const revision = await createRevision(saved.body.versionId, writer, uid);
    if (revision.status !== 201) throw new Error(`revision: ${revision.status} ${JSON.stringify(revision.body)}`);
    return revision.body as { revisionId: string; versionId: string };
  };

  return { ...gateway, toolUid, writerKey, writer, base, call, draft, save, saveLatest, test, testBoth, createRevision, deploy, tested };
}
