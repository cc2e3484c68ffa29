import type { ComponentType } from "preact";
import { useState } from "preact/hooks";
import type { HooksTabProps } from "../hooks/HooksTab.tsx";
import { MetricsChart } from "./MetricsChart.tsx";
import { api, call, type Schemas } from "../api.ts";
import { href } from "../router.ts";
import { json, when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { useProfiles } from "../ui/profiles.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

const loadTools = async (ws: string) => (await call(api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws } } }))).tools;
/** As the list route answers it (openapi-fetch's view of `previousDefinition` differs from the component's). */
type Tool = Awaited<ReturnType<typeof loadTools>>[number];
type Mode = Schemas["ToolPolicy"]["mode"];

/** A tool in review is a new one (nothing approved yet) or a changed one; the admin needs to know which. */
const isNewInReview = (tool: Tool) => tool.status === "review_required" && tool.approvedHash === null;
const reviewState = (tool: Tool) =>
  tool.status === "review_required"
    ? isNewInReview(tool)
      ? "review required: new tool"
      : "review required: changed definition"
    : tool.status;

export function Tools({ ws, rest }: ScreenProps) {
  const tools = useLoad(() => loadTools(ws), [ws]);
  const [name, tab] = rest;
  if (tools.error) return <ErrorNote error={tools.error} />;
  if (!tools.data) return <Loading what="tools" />;
  const tool = name ? tools.data.find((t) => t.publicName === name) : undefined;
  if (name && !tool) return <ErrorNote error={new Error(`No tool named ${name} in this workspace.`)} />;
  if (tool) return <ToolDetail ws={ws} tool={tool} hooksTab={tab === "hooks"} onChanged={tools.reload} />;
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Tools</h1>
      {tools.data.length === 0 && <Empty>No tools yet: add a service first.</Empty>}
      {tools.data.length > 0 && (
        <div class="table-wrap">
          <table>
            <thead>
              <tr>
                <th scope="col">Tool</th>
                <th scope="col">Service</th>
                <th scope="col">Review</th>
                <th scope="col">Projection</th>
                <th scope="col">Updated</th>
              </tr>
            </thead>
            <tbody>
              {tools.data.map((t) => (
                <tr key={t.uid}>
                  <td>
                    <a href={href(ws, "tools", t.publicName)}>{t.publicName}</a>
                  </td>
                  <td>{t.serviceSlug}</td>
                  <td class={t.status === "review_required" ? "highlight" : undefined}>{reviewState(t)}</td>
                  <td>{t.projection ? t.projection.join(", ") : "—"}</td>
                  <td>{when(t.updatedAt)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function ToolDetail({ ws, tool, hooksTab, onChanged }: { ws: string; tool: Tool; hooksTab: boolean; onChanged: () => void }) {
  return (
    <section aria-labelledby="screen-title">
      <p>
        <a href={href(ws, "tools")}>All tools</a>
      </p>
      <h1 id="screen-title">{tool.publicName}</h1>
      <nav aria-label="Tool tabs" class="tabs">
        <a href={href(ws, "tools", tool.publicName)} aria-current={hooksTab ? undefined : "page"}>
          Definition and policy
        </a>{" "}
        <a href={href(ws, "tools", tool.publicName, "hooks")} aria-current={hooksTab ? "page" : undefined}>
          Hooks
        </a>
      </nav>
      {hooksTab ? (
        <LazyHooksTab workspaceId={ws} toolName={tool.publicName} />
      ) : (
        <>
          <h2>Calls</h2>
          <MetricsChart ws={ws} tool={tool.uid} label={`Chart of ${tool.publicName}'s calls per minute by outcome and p50/p99 duration`} />
          <Review ws={ws} tool={tool} onChanged={onChanged} />
          <Policies ws={ws} tool={tool} />
          <Projection ws={ws} tool={tool} onChanged={onChanged} />
        </>
      )}
    </section>
  );
}

/** The Hooks tab (and Monaco with it) loads only when opened. */
function LazyHooksTab(props: HooksTabProps) {
  const module = useLoad<ComponentType<HooksTabProps>>(async () => (await import("../hooks/HooksTab.tsx")).default, []);
  if (module.error) return <ErrorNote error={module.error} />;
  const View = module.data;
  return View ? <View {...props} /> : <Loading what="the hook editor" />;
}

function Review({ ws, tool, onChanged }: { ws: string; tool: Tool; onChanged: () => void }) {
  const [error, setError] = useState<unknown>(undefined);
  async function approve() {
    setError(undefined);
    try {
      await call(
        api.POST("/v1/workspaces/{ws}/tools/{toolUid}/review", {
          params: { path: { ws, toolUid: tool.uid } },
          body: { definitionHash: tool.definitionHash },
        }),
      );
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <section aria-labelledby="review-title">
      <h2 id="review-title">Definition</h2>
      <p>
        Review state: <strong>{reviewState(tool)}</strong>
        {tool.schemaBreach && <span class="error"> · {tool.schemaBreach.message}</span>}
      </p>
      {tool.status === "review_required" && isNewInReview(tool) ? (
        <>
          <p>This tool is new: agents cannot see or call it until its definition is approved.</p>
          <pre tabIndex={0} aria-label="New definition">
            {json(tool.definition)}
          </pre>
          <button type="button" onClick={approve}>
            Approve new tool
          </button>
        </>
      ) : tool.status === "review_required" ? (
        <>
          <p>The upstream changed this tool. Compare the definitions, then approve the new one to let agents call it again.</p>
          <div class="side-by-side">
            <div>
              <h3>Approved definition</h3>
              <pre tabIndex={0} aria-label="Approved definition">
                {tool.previousDefinition ? json(tool.previousDefinition) : "(none approved yet)"}
              </pre>
            </div>
            <div>
              <h3>New definition</h3>
              <pre tabIndex={0} aria-label="New definition">
                {json(tool.definition)}
              </pre>
            </div>
          </div>
          <button type="button" onClick={approve}>
            Approve new definition
          </button>
        </>
      ) : (
        <pre tabIndex={0} aria-label="Definition">
          {json(tool.definition)}
        </pre>
      )}
      <ErrorNote error={error} />
    </section>
  );
}

function Policies({ ws, tool }: { ws: string; tool: Tool }) {
  const profiles = useProfiles(ws);
  const path = { params: { path: { ws, toolUid: tool.uid } } };
  const policies = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/policy", path))).policies, [ws, tool.uid]);
  const [error, setError] = useState<unknown>(undefined);

  async function setMode(profileId: string, mode: Mode) {
    setError(undefined);
    try {
      await call(api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/policy", { ...path, body: { profileId, mode } }));
      policies.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section aria-labelledby="policy-title">
      <h2 id="policy-title">Policy per profile</h2>
      <ErrorNote error={error ?? profiles.error ?? policies.error} />
      {(!profiles.data || !policies.data) && !profiles.error && !policies.error && <Loading what="policies" />}
      {profiles.data && policies.data && (
        <table>
          <thead>
            <tr>
              <th scope="col">Profile</th>
              <th scope="col">Mode</th>
            </tr>
          </thead>
          <tbody>
            {profiles.data.map((profile) => {
              const own = policies.data!.find((p) => p.profileId === profile.id);
              return (
                <tr key={profile.id}>
                  <td>{profile.name}</td>
                  <td>
                    <label class="check">
                      <span class="visually-hidden">Mode for profile {profile.name}</span>
                      <select value={own?.mode ?? ""} onChange={(e) => setMode(profile.id, e.currentTarget.value as Mode)}>
                        {!own && <option value="">profile default ({profile.defaultMode})</option>}
                        <option value="allow">allow</option>
                        <option value="approval">approval</option>
                        <option value="block">block</option>
                      </select>
                    </label>
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      )}
    </section>
  );
}

function Projection({ ws, tool, onChanged }: { ws: string; tool: Tool; onChanged: () => void }) {
  const [fields, setFields] = useState((tool.projection ?? []).join(", "));
  const [error, setError] = useState<unknown>(undefined);
  async function save(event: Event) {
    event.preventDefault();
    setError(undefined);
    const list = fields
      .split(",")
      .map((f) => f.trim())
      .filter(Boolean);
    try {
      await call(
        api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/projection", {
          params: { path: { ws, toolUid: tool.uid } },
          body: { fields: list.length ? list : null },
        }),
      );
      onChanged();
    } catch (failure) {
      setError(failure);
    }
  }
  return (
    <form onSubmit={save} aria-labelledby="projection-title">
      <h2 id="projection-title">Projection</h2>
      <p class="muted">Top-level fields of the structured result agents receive; empty sends the whole result.</p>
      <label>
        Fields (comma-separated)
        <input size={50} value={fields} onInput={(e) => setFields(e.currentTarget.value)} />
      </label>
      <button type="submit">Save projection</button>
      <ErrorNote error={error} />
    </form>
  );
}
