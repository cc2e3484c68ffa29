import { useState } from "preact/hooks";
import { ApiRequestError, api, call, type Schemas } from "../api.ts";
import { when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

type Service = Schemas["Service"];

/** What an indexing pass put in review, said after its counts (calls to these tools are refused until approved). */
const inReview = (tools: string[]) =>
  tools.length
    ? ` ${tools.length === 1 ? "1 tool awaits" : `${tools.length} tools await`} review on the Tools screen: ${tools.join(", ")}.`
    : "";

export function Services({ ws }: ScreenProps) {
  const services = useLoad(
    async () =>
      (await call(api.GET("/v1/workspaces/{ws}/services", { params: { path: { ws }, query: { includeDeleted: "true" } } }))).services,
    [ws],
  );
  const [notice, setNotice] = useState<string | null>(null);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [historyOf, setHistoryOf] = useState<Service | null>(null);
  const live = services.data?.filter((s) => !s.deletedAt) ?? [];
  const deleted = services.data?.filter((s) => s.deletedAt) ?? [];

  async function act(run: () => Promise<string>) {
    setActionError(undefined);
    setNotice(null);
    try {
      setNotice(await run());
      services.reload();
    } catch (error) {
      setActionError(error);
    }
  }
  const path = (svc: Service) => ({ params: { path: { ws, svc: svc.id } } });

  const refresh = (svc: Service) =>
    act(async () => {
      const index = await call(api.POST("/v1/workspaces/{ws}/services/{svc}/refresh", path(svc)));
      return `Indexed ${svc.slug}: ${index.added.length} added, ${index.changed.length} changed, ${index.removed.length} removed, ${index.unchanged} unchanged.${inReview(index.review)}`;
    });
  const setCapture = (svc: Service, payloadCapture: boolean) =>
    act(async () => {
      await call(api.PATCH("/v1/workspaces/{ws}/services/{svc}", { ...path(svc), body: { payloadCapture } }));
      return `Payload capture for ${svc.slug} is ${payloadCapture ? "on" : "off"}.`;
    });
  // The browser leaves for the authorization server and comes back here through the gateway's callback.
  const authorize = (svc: Service) =>
    act(async () => {
      const link = await call(
        api.POST("/v1/workspaces/{ws}/services/{svc}/authorize", { ...path(svc), body: { returnTo: location.href } }),
      );
      location.assign(link.authorizationUrl);
      return `Opening ${svc.slug}'s authorization server…`;
    });
  const disconnect = (svc: Service) => {
    if (!confirm(`Disconnect ${svc.slug}? Its grants are revoked and its tools refuse calls until it is authorized again.`)) return;
    return act(async () => {
      const done = await call(api.DELETE("/v1/workspaces/{ws}/services/{svc}/authorization", path(svc)));
      return `Disconnected ${svc.slug}: ${done.grants} grants deleted, ${done.revoked} revoked at the authorization server.`;
    });
  };
  const remove = (svc: Service) => {
    if (!confirm(`Delete service ${svc.slug}? Its tools disappear from every agent.`)) return;
    return act(async () => {
      await call(api.DELETE("/v1/workspaces/{ws}/services/{svc}", path(svc)));
      return `Deleted ${svc.slug}.`;
    });
  };

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Services</h1>
      <AddService ws={ws} onAdded={(message) => (setNotice(message), services.reload())} />
      <h2>Connected services</h2>
      {notice && (
        <p class="ok" role="status">
          {notice}
        </p>
      )}
      <DeleteRefusal error={actionError} />
      {services.loading && !services.data && <Loading what="services" />}
      <ErrorNote error={services.error} />
      {services.data && live.length === 0 && <Empty>No services yet: add one above.</Empty>}
      {live.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Slug</th>
                <th scope="col">URL</th>
                <th scope="col">Secret headers</th>
                <th scope="col">Authorization</th>
                <th scope="col">Indexed</th>
                <th scope="col">Payload capture</th>
                <th scope="col">New tools</th>
                <th scope="col">Actions</th>
              </tr>
            </thead>
            <tbody>
              {live.map((svc) => (
                <tr key={svc.id}>
                  <td data-label="Slug">{svc.slug}</td>
                  <td data-label="URL">
                    <code>
                      {svc.url}
                      {svc.secretQueryNames.length > 0 && `?${svc.secretQueryNames.map((name) => `${name}=…`).join("&")}`}
                    </code>
                    {svc.secretQueryNames.length > 0 && <span class="visually-hidden"> (query values are secret)</span>}
                  </td>
                  <td data-label="Secret headers">{svc.secretHeaderNames.length ? svc.secretHeaderNames.join(", ") : "—"}</td>
                  <td data-label="Authorization">
                    <AuthorizationState service={svc} />
                  </td>
                  <td data-label="Indexed">{when(svc.indexedAt)}</td>
                  <td data-label="Payload capture">
                    <label class="check">
                      <input type="checkbox" checked={svc.payloadCapture} onChange={(e) => setCapture(svc, e.currentTarget.checked)} />
                      <span class="visually-hidden">Payload capture for {svc.slug}</span>
                    </label>
                  </td>
                  <td data-label="New tools">
                    {svc.reviewInitialTools ? "reviewed, from the first indexing" : "reviewed when a refresh adds them"}
                  </td>
                  <td data-label="Actions">
                    {svc.authorization.kind === "oauth" && (
                      <>
                        <button type="button" aria-label={`Authorize ${svc.slug}`} onClick={() => authorize(svc)}>
                          Authorize
                        </button>{" "}
                        {svc.authorization.status === "authorized" && (
                          <>
                            <button type="button" class="secondary" aria-label={`Disconnect ${svc.slug}`} onClick={() => disconnect(svc)}>
                              Disconnect
                            </button>{" "}
                          </>
                        )}
                      </>
                    )}
                    <button type="button" class="secondary" aria-label={`Refresh index of ${svc.slug}`} onClick={() => refresh(svc)}>
                      Refresh index
                    </button>{" "}
                    <button type="button" class="secondary" aria-label={`Hook history of ${svc.slug}`} onClick={() => setHistoryOf(svc)}>
                      Hook history
                    </button>{" "}
                    <button type="button" class="danger" aria-label={`Delete ${svc.slug}`} onClick={() => remove(svc)}>
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deleted.length > 0 && (
        <>
          <h2>Deleted services with hook history</h2>
          <ul>
            {deleted.map((svc) => (
              <li key={svc.id}>
                {svc.slug}, deleted {when(svc.deletedAt)}{" "}
                <button type="button" class="secondary" onClick={() => setHistoryOf(svc)}>
                  View hook history of {svc.slug}
                </button>
              </li>
            ))}
          </ul>
        </>
      )}
      {historyOf && <HookHistory ws={ws} service={historyOf} />}
    </section>
  );
}

/** How the gateway authenticates to the service: secret headers only, or OAuth and whether it is authorized (and if not, why). */
function AuthorizationState({ service }: { service: Service }) {
  const auth = service.authorization;
  if (auth.kind === "none") return <>—</>;
  const mode = auth.mode === "shared" ? "shared" : "per user";
  if (auth.status === "authorized") return <span class="ok">OAuth ({mode}): authorized</span>;
  return (
    <span class="warn">
      OAuth ({mode}): pending authorization
      {auth.pendingReason && auth.pendingReason.code !== "connected" && (
        <>
          {" "}
          ({auth.pendingReason.code}: {auth.pendingReason.message})
        </>
      )}
    </span>
  );
}

/** Deleting a service whose tools have hook history is refused; say which tools hold it. */
function DeleteRefusal({ error }: { error: unknown }) {
  if (!(error instanceof ApiRequestError) || error.code !== "hook_history_exists") return <ErrorNote error={error} />;
  // The tools by the names agents call them (`details.toolNames`), not their ids.
  const names = Array.isArray(error.details?.toolNames) ? error.details.toolNames.filter((t): t is string => typeof t === "string") : [];
  return (
    <div class="error" role="alert">
      <p>
        {error.message} ({error.code})
      </p>
      {names.length > 0 && <p>Tools with hook history: {names.join(", ")}</p>}
    </div>
  );
}

function AddService({ ws, onAdded }: { ws: string; onAdded: (message: string) => void }) {
  const [slug, setSlug] = useState("");
  const [url, setUrl] = useState("");
  const [headers, setHeaders] = useState<{ name: string; value: string }[]>([]);
  const [reviewInitialTools, setReviewInitialTools] = useState(false);
  const [oauthMode, setOauthMode] = useState<"shared" | "per_user">("shared");
  const [clientId, setClientId] = useState("");
  const [clientSecret, setClientSecret] = useState("");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const secretHeaders = Object.fromEntries(headers.filter((h) => h.name).map((h) => [h.name, h.value]));
      const oauth = { mode: oauthMode, ...(clientId ? { clientId } : {}), ...(clientId && clientSecret ? { clientSecret } : {}) };
      const body = { slug, url, oauth, reviewInitialTools, ...(headers.length ? { headers: secretHeaders } : {}) };
      const created = await call(api.POST("/v1/workspaces/{ws}/services", { params: { path: { ws } }, body }));
      // The header values leave the page now; the API never returns them.
      setSlug("");
      setUrl("");
      setHeaders([]);
      setClientId("");
      setClientSecret("");
      setReviewInitialTools(false);
      onAdded(
        created.index
          ? `Added ${created.service.slug}: ${created.index.added.length} tools indexed.${inReview(created.index.review)}`
          : `Added ${created.service.slug}: its server asks for OAuth, so nothing is indexed yet. Authorize it below.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-service-title">
      <h2 id="add-service-title">Add a service</h2>
      <label>
        Slug
        <input required pattern="[a-z][a-z0-9\-]{0,31}" value={slug} onInput={(e) => setSlug(e.currentTarget.value)} />
      </label>
      <label>
        MCP URL
        <input required type="url" size={40} value={url} onInput={(e) => setUrl(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Secret headers (entered once, never shown again)</legend>
        {headers.map((header, i) => (
          <div key={i}>
            <label>
              Header name {i + 1}
              <input
                required
                value={header.name}
                onInput={(e) => setHeaders(headers.map((h, j) => (j === i ? { ...h, name: e.currentTarget.value } : h)))}
              />
            </label>
            <label>
              Header value {i + 1}
              <input
                type="password"
                autocomplete="off"
                value={header.value}
                onInput={(e) => setHeaders(headers.map((h, j) => (j === i ? { ...h, value: e.currentTarget.value } : h)))}
              />
            </label>
          </div>
        ))}
        <button type="button" class="secondary" onClick={() => setHeaders([...headers, { name: "", value: "" }])}>
          Add a secret header
        </button>
      </fieldset>
      <fieldset>
        <legend>If the server asks for OAuth</legend>
        <label>
          Grant
          <select value={oauthMode} onChange={(e) => setOauthMode(e.currentTarget.value === "per_user" ? "per_user" : "shared")}>
            <option value="shared">Shared: one grant for the workspace</option>
            <option value="per_user">Per user: each caller authorizes their own</option>
          </select>
        </label>
        <label>
          Pre-registered client id (optional)
          <input value={clientId} onInput={(e) => setClientId(e.currentTarget.value)} />
        </label>
        <label>
          Client secret (optional, never shown again)
          <input type="password" autocomplete="off" value={clientSecret} onInput={(e) => setClientSecret(e.currentTarget.value)} />
        </label>
      </fieldset>
      <label class="check">
        <input type="checkbox" checked={reviewInitialTools} onChange={(e) => setReviewInitialTools(e.currentTarget.checked)} />
        Review its tools before agents can call them
      </label>
      <p class="muted">Tools a later refresh adds always wait for review; this also holds back the ones found now.</p>
      <button type="submit" disabled={busy}>
        Add service
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/** What a deleted service left behind: hook history per tool, readable but no longer callable. */
function HookHistory({ ws, service }: { ws: string; service: Service }) {
  const history = useLoad(
    () => call(api.GET("/v1/workspaces/{ws}/services/{svc}/hook-history", { params: { path: { ws, svc: service.id } } })),
    [ws, service.id],
  );
  const [error, setError] = useState<unknown>(undefined);
  const [notice, setNotice] = useState<string | null>(null);
  const toolPath = (toolUid: string) => ({ params: { path: { ws, toolUid } } });

  async function exportHook(tool: Schemas["HookHistoryTool"]) {
    setError(undefined);
    try {
      const exported = await call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/export", toolPath(tool.toolUid)));
      const link = document.createElement("a");
      link.href = URL.createObjectURL(new Blob([JSON.stringify(exported, null, 2)], { type: "application/json" }));
      link.download = `${tool.name}-hook-history.json`;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (failure) {
      setError(failure);
    }
  }
  async function resetHook(tool: Schemas["HookHistoryTool"]) {
    if (prompt(`Reset erases every version and revision of ${tool.name}'s hook. Type the tool name to confirm.`) !== tool.name) return;
    setError(undefined);
    try {
      await call(api.DELETE("/v1/workspaces/{ws}/tools/{toolUid}/hook", toolPath(tool.toolUid)));
      setNotice(`Reset the hook of ${tool.name}.`);
      history.reload();
    } catch (failure) {
      setError(failure);
    }
  }

  return (
    <section class="panel" aria-labelledby="history-title">
      <h2 id="history-title">
        Hook history of {service.slug}
        {service.deletedAt && " (deleted: history only)"}
      </h2>
      <p class="muted">
        {service.deletedAt
          ? "Nothing can change these hooks any more: export each one, then reset it."
          : "A service whose tools have hook history cannot be deleted: export and reset these hooks first."}
      </p>
      {notice && (
        <p class="ok" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={error ?? history.error} />
      {history.loading && !history.data && <Loading what="hook history" />}
      {history.data?.tools.length === 0 && <Empty>No hook history.</Empty>}
      {history.data && history.data.tools.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Tool</th>
              <th scope="col">Versions</th>
              <th scope="col">Revisions</th>
              <th scope="col">Last change</th>
              <th scope="col">Cleanup</th>
            </tr>
          </thead>
          <tbody>
            {history.data.tools.map((tool) => (
              <tr key={tool.toolUid}>
                <td>{tool.name}</td>
                <td>{tool.versions}</td>
                <td>{tool.revisions}</td>
                <td>{when(tool.lastChangeAt)}</td>
                <td>
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Export hook history of ${tool.name}`}
                    onClick={() => exportHook(tool)}
                  >
                    Export
                  </button>{" "}
                  <button type="button" class="danger" aria-label={`Reset hook of ${tool.name}`} onClick={() => resetHook(tool)}>
                    Reset
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
