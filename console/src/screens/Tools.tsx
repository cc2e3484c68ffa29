import type { ComponentType } from "preact";
import { useState } from "preact/hooks";
import type { HooksTabProps } from "../hooks/HooksTab.tsx";
import { api, call } from "../api.ts";
import { href, hrefWith, replaceRoute } from "../router.ts";
import { ConfirmDialog, type ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { invisibleCount, json } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Pager } from "../ui/Pager.tsx";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { DefinitionDiff } from "./DefinitionDiff.tsx";
import { MetricsChart } from "./MetricsChart.tsx";
import { ChangeNotice, MODES, ModeCell, ModeLabel, type PolicyChange } from "./policy.tsx";
import type { ScreenProps } from "./screen.ts";

const loadTool = async (ws: string, publicName: string) =>
  (await call(api.GET("/v1/workspaces/{ws}/tools", { params: { path: { ws }, query: { publicName } } }))).tools[0];
/** As the list route answers it (openapi-fetch's view of `previousDefinition` differs from the component's). */
type Tool = NonNullable<Awaited<ReturnType<typeof loadTool>>>;

const PAGE = 50;
const STATUSES = [
  { value: "active", label: "active" },
  { value: "review_required", label: "review required" },
  { value: "removed", label: "removed" },
] as const;

/** A tool in review is a new one (nothing approved yet) or a changed one; the admin needs to know which. */
const isNewInReview = (tool: { status: string; approvedHash: string | null }) =>
  tool.status === "review_required" && tool.approvedHash === null;
const reviewState = (tool: { status: string; approvedHash: string | null }) =>
  tool.status === "review_required"
    ? isNewInReview(tool)
      ? "review required: new tool"
      : "review required: changed definition"
    : tool.status;

export function Tools({ ws, rest, query }: ScreenProps) {
  const [name, tab] = rest;
  if (name) return <ToolDetail ws={ws} publicName={name} hooksTab={tab === "hooks"} />;
  return <ToolList ws={ws} query={query} />;
}

/** Tools with their review state and their effective mode under every profile: searched, filtered and paged on the server. */
function ToolList({ ws, query }: { ws: string; query: URLSearchParams }) {
  // The filters live in the URL, so a link (Overview's "awaiting review") opens the filtered list.
  const filters = {
    q: query.get("q") ?? "",
    service: query.get("service") ?? "",
    status: query.get("status") ?? "",
    mode: query.get("mode") ?? "",
    profile: query.get("profile") ?? "",
    cursor: query.get("cursor") ?? "",
  };
  const services = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/services", { params: { path: { ws } } }))).services, [ws]);
  const page = useLoad(
    () =>
      call(
        api.GET("/v1/workspaces/{ws}/policy/matrix", {
          params: {
            path: { ws },
            query: {
              q: filters.q || undefined,
              serviceId: filters.service || undefined,
              status: (filters.status || undefined) as (typeof STATUSES)[number]["value"] | undefined,
              mode: (filters.mode || undefined) as (typeof MODES)[number] | undefined,
              profileId: (filters.mode && filters.profile) || undefined,
              limit: PAGE,
              cursor: filters.cursor || undefined,
            },
          },
        }),
      ),
    [ws, filters.q, filters.service, filters.status, filters.mode, filters.profile, filters.cursor],
  );
  // Any filter change starts again at the first page.
  const set = (changes: Partial<Record<keyof typeof filters, string | undefined>>) =>
    replaceRoute(hrefWith(ws, "tools", [], { ...filters, cursor: undefined, ...changes }));
  const profiles = page.data?.profiles ?? [];

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Tools</h1>
      <form class="filters" role="search" aria-label="Tool filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search
          <input type="search" value={filters.q} placeholder="name or description" onInput={(e) => set({ q: e.currentTarget.value })} />
        </label>
        <label>
          Service
          <select value={filters.service} onChange={(e) => set({ service: e.currentTarget.value })}>
            <option value="">any</option>
            {services.data?.map((service) => (
              <option key={service.id} value={service.id}>
                {service.slug}
              </option>
            ))}
          </select>
        </label>
        <label>
          Review
          <select value={filters.status} onChange={(e) => set({ status: e.currentTarget.value })}>
            <option value="">any</option>
            {STATUSES.map((status) => (
              <option key={status.value} value={status.value}>
                {status.label}
              </option>
            ))}
          </select>
        </label>
        <label>
          Mode
          <select value={filters.mode} onChange={(e) => set({ mode: e.currentTarget.value })}>
            <option value="">any</option>
            {MODES.map((mode) => (
              <option key={mode} value={mode}>
                {mode}
              </option>
            ))}
          </select>
        </label>
        <label>
          Under profile
          <select value={filters.profile} onChange={(e) => set({ profile: e.currentTarget.value })} disabled={!filters.mode}>
            <option value="">any profile</option>
            {profiles.map((profile) => (
              <option key={profile.id} value={profile.id}>
                {profile.name}
              </option>
            ))}
          </select>
        </label>
      </form>
      <ErrorNote error={page.error ?? services.error} />
      {!page.data && !page.error && <Loading what="tools" />}
      {page.data?.total === 0 && (
        <Empty>{Object.values(filters).some(Boolean) ? "No tools match." : "No tools yet: add a service first."}</Empty>
      )}
      {page.data && page.data.tools.length > 0 && (
        <>
          <div class="table-wrap">
            <table class="stack" aria-label="Tools">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  <th scope="col">Service</th>
                  <th scope="col">Review</th>
                  <th scope="col">Mode per profile</th>
                </tr>
              </thead>
              <tbody>
                {page.data.tools.map((tool) => (
                  <tr key={tool.uid}>
                    <td data-label="Tool">
                      <a href={href(ws, "tools", tool.publicName)}>{tool.publicName}</a>
                    </td>
                    <td data-label="Service">{tool.serviceSlug}</td>
                    <td data-label="Review" class={tool.status === "review_required" ? "highlight" : undefined}>
                      {reviewState(tool)}
                    </td>
                    <td data-label="Modes">
                      {tool.modes.map((cell) => (
                        <span key={cell.profileId} class="mode-per-profile">
                          {profiles.find((p) => p.id === cell.profileId)?.name}: <ModeLabel mode={cell.mode} />
                        </span>
                      ))}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            pageSize={PAGE}
            total={page.data.total}
            shown={page.data.tools.length}
            start={Number(filters.cursor || 0)}
            nextCursor={page.data.nextCursor}
            onPage={(cursor) => set({ cursor })}
          />
        </>
      )}
    </section>
  );
}

function ToolDetail({ ws, publicName, hooksTab }: { ws: string; publicName: string; hooksTab: boolean }) {
  const tool = useLoad(() => loadTool(ws, publicName), [ws, publicName]);
  if (tool.error) return <ErrorNote error={tool.error} />;
  if (tool.loading && !tool.data) return <Loading what="the tool" />;
  if (!tool.data) return <ErrorNote error={new Error(`No tool named ${publicName} in this workspace.`)} />;
  return (
    <section aria-labelledby="screen-title">
      <p>
        <a href={href(ws, "tools")}>All tools</a>
      </p>
      <h1 id="screen-title">{tool.data.publicName}</h1>
      <nav aria-label="Tool tabs" class="tabs">
        <a href={href(ws, "tools", publicName)} aria-current={hooksTab ? undefined : "page"}>
          Definition and policy
        </a>{" "}
        <a href={href(ws, "tools", publicName, "hooks")} aria-current={hooksTab ? "page" : undefined}>
          Hooks
        </a>
      </nav>
      {hooksTab ? (
        <LazyHooksTab workspaceId={ws} toolName={publicName} />
      ) : (
        <>
          <h2>Calls</h2>
          <MetricsChart ws={ws} tool={tool.data.uid} label={`Chart of ${publicName}'s calls per minute by outcome and p50/p99 duration`} />
          <Review ws={ws} tool={tool.data} onChanged={tool.reload} />
          <Policies ws={ws} tool={tool.data} />
          <Projection ws={ws} tool={tool.data} onChanged={tool.reload} />
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
        {tool.nameProblem && <span class="error"> · Not offered to agents: {tool.nameProblem}</span>}
      </p>
      <HiddenCharacters definition={tool.definition} />
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
          <DefinitionDiff previous={tool.previousDefinition} current={tool.definition} />
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

/** The tool's row of the policy matrix: its effective mode under each profile, changed per cell. */
function Policies({ ws, tool }: { ws: string; tool: Tool }) {
  const [edits, setEdits] = useState(0);
  const row = useLoad(async () => {
    const page = await call(
      api.GET("/v1/workspaces/{ws}/policy/matrix", {
        params: { path: { ws }, query: { q: tool.publicName, serviceId: tool.serviceId, limit: 100 } },
      }),
    );
    return { profiles: page.profiles, row: page.tools.find((candidate) => candidate.uid === tool.uid) };
  }, [ws, tool.uid, edits]);
  const [change, setChange] = useState<PolicyChange | null>(null);
  const [confirming, setConfirming] = useState<ConfirmRequest>();

  return (
    <section aria-labelledby="policy-title">
      <h2 id="policy-title">Policy per profile</h2>
      <ChangeNotice
        change={change}
        onUndone={() => {
          setChange(null);
          setEdits((n) => n + 1);
        }}
      />
      <ErrorNote error={row.error} />
      {!row.data && !row.error && <Loading what="policies" />}
      {row.data?.row && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Profile</th>
                <th scope="col">Mode (override, then effective)</th>
              </tr>
            </thead>
            <tbody>
              {row.data.row.modes.map((cell) => {
                const profile = row.data!.profiles.find((p) => p.id === cell.profileId)!;
                return (
                  <tr key={cell.profileId}>
                    <td data-label="Profile">{profile.name}</td>
                    <td data-label="Mode">
                      <ModeCell
                        ws={ws}
                        tool={tool}
                        cell={cell}
                        profile={profile}
                        confirm={setConfirming}
                        onChanged={(made) => {
                          setChange(made);
                          setEdits((n) => n + 1);
                        }}
                      />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <p class="muted">
        Every profile&apos;s mode for every tool is also on <a href={hrefWith(ws, "profiles", [], { q: tool.publicName })}>Profiles</a>.
      </p>
      <ConfirmDialog request={confirming} onClose={() => setConfirming(undefined)} />
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

/**
 * An upstream can hide text for the agent in characters a reader cannot see (round 6): the definition below shows
 * them as `\u` escapes, and this says they are there, before anyone approves.
 */
function HiddenCharacters({ definition }: { definition: unknown }) {
  const count = invisibleCount(JSON.stringify(definition));
  if (!count) return null;
  return (
    <p class="error" role="note">
      This definition holds {count} invisible {count === 1 ? "character" : "characters"} (shown as <code>\u</code> escapes). Agents read
      them even though a page does not show them: read what they spell before approving.
    </p>
  );
}
