import { addService, api, createKey, createWorkspace, type TestWorkspace } from "../../test/helpers.ts";
import { keyCaller, type Caller } from "../hooks/lifecycle/lifecycle.fixtures.ts";

/** A workspace with one service at `url`, a client key, a hooks:write key, and hook helpers for one of its tools. */
export async function gatewayFor(slug: string, url: string, workspace?: TestWorkspace) {
  const ws = workspace ?? (await createWorkspace());
  const { service } = await addService(ws, { slug, url });
  const clientKey = await createKey(ws, ["tools:call"], ws.defaultProfileId);
  const writer = keyCaller(await createKey(ws, ["hooks:write", "hooks:read"]));
  const tools = (await api(`/v1/workspaces/${ws.ws}/tools`, { key: ws.adminKey })).body.tools as { uid: string; name: string }[];
  const uidOf = (name: string) => tools.find((tool) => tool.name === name)!.uid;
  const hook = (uid: string) => `/v1/workspaces/${ws.ws}/tools/${uid}/hook`;
  const as = (caller: Caller, path: string, init: { method?: string; body?: unknown; headers?: Record<string, string> } = {}) =>
    api(path, { method: init.method, body: init.body, headers: { ...caller.headers, ...init.headers } });

  async function save(uid: string, source: string, config: Record<string, unknown> = {}) {
    const draft = await as(writer, `${hook(uid)}/draft`);
    const saved = await as(writer, `${hook(uid)}/draft`, {
      method: "PUT",
      body: { source, config },
      headers: { "if-match": draft.body.etag },
    });
    if (saved.status !== 200) throw new Error(`save: ${saved.status} ${JSON.stringify(saved.body)}`);
    return saved;
  }
  /** Saves the source, runs the given tests (each must pass), creates a revision. */
  async function revision(uid: string, source: string, tests: Record<string, unknown>[], config: Record<string, unknown> = {}) {
    const saved = await save(uid, source, config);
    const runs = [];
    for (const test of tests) {
      const run = await as(writer, `${hook(uid)}/test`, { body: test });
      if (!run.body.passed) throw new Error(`test: ${run.status} ${JSON.stringify(run.body)}`);
      runs.push(run.body);
    }
    const created = await as(writer, `${hook(uid)}/revisions`, { body: { versionId: saved.body.versionId } });
    if (created.status !== 201) throw new Error(`revision: ${created.status} ${JSON.stringify(created.body)}`);
    return { revisionId: created.body.revisionId as string, bundleKey: created.body.bundleKey as string, runs };
  }
  const deploy = async (uid: string, slot: "active" | "shadow", revisionId: string) => {
    const res = await as(writer, `${hook(uid)}/deployments/${slot}`, { method: "PUT", body: { revisionId } });
    if (res.status !== 200) throw new Error(`deploy: ${res.status} ${JSON.stringify(res.body)}`);
  };
  const logs = (uid: string) => api(`${hook(uid)}/logs`, { key: ws.adminKey }).then((res) => res.body.logs as Record<string, any>[]);
  return { ...ws, service, clientKey, writer, uidOf, hook, as, save, revision, deploy, logs };
}

/** A before-only hook that prefixes the query with `label`, so each revision's upstream arguments tell it apart. */
export const prefixHook = (label: string) => `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) {
    return { action: "continue", arguments: { ...args, query: "${label} " + args.query } };
  },
});
`;
export const BEFORE_TEST = [{ stage: "before", arguments: { query: "sso" } }];
export const PASS_THROUGH = `export default defineToolAdapter({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: args }) { return { action: "continue", arguments: args }; },
});
`;
