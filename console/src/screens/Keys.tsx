import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { useLoad } from "../ui/load.ts";
import { useActorNames } from "../ui/actors.ts";
import { useProfiles } from "../ui/profiles.ts";
import { when } from "../ui/format.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

type Scope = Schemas["ApiKey"]["scopes"][number];
const SCOPES: { scope: Scope; hint: string }[] = [
  { scope: "tools:call", hint: "call tools through /mcp" },
  { scope: "hooks:read", hint: "read hooks and logs" },
  { scope: "hooks:write", hint: "edit and deploy hooks" },
  { scope: "admin", hint: "everything" },
];

export function Keys({ ws }: ScreenProps) {
  const listed = useLoad(async () => await call(api.GET("/v1/workspaces/{ws}/keys", { params: { path: { ws } } })), [ws]);
  const keys = { ...listed, data: listed.data?.keys };
  const profiles = useProfiles(ws);
  const [created, setCreated] = useState<Schemas["CreatedApiKey"] | null>(null);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const profileName = (id: string | null) => profiles.data?.find((p) => p.id === id)?.name ?? id ?? "—";
  const name = useActorNames(ws);

  async function revoke(key: Schemas["ApiKey"]) {
    if (!confirm(`Revoke key "${key.name}" (${key.prefix}…) and the keys made with it? Calls with them are refused from now on.`)) return;
    setActionError(undefined);
    try {
      await call(api.DELETE("/v1/workspaces/{ws}/keys/{keyId}", { params: { path: { ws, keyId: key.id } } }));
      keys.reload();
    } catch (error) {
      setActionError(error);
    }
  }

  async function rotate(key: Schemas["ApiKey"]) {
    if (!confirm(`Give key "${key.name}" (${key.prefix}…) a new secret? Its current secret is refused from now on.`)) return;
    setActionError(undefined);
    try {
      setCreated(await call(api.POST("/v1/workspaces/{ws}/keys/{keyId}/rotate", { params: { path: { ws, keyId: key.id } } })));
      keys.reload();
    } catch (error) {
      setActionError(error);
    }
  }

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Keys</h1>
      <CreateKey
        ws={ws}
        profiles={profiles.data ?? []}
        onCreated={(key) => {
          setCreated(key);
          keys.reload();
        }}
      />
      {created && <NewSecret created={created} onDone={() => setCreated(null)} />}
      <h2>Keys</h2>
      <ErrorNote error={actionError ?? keys.error} />
      {keys.loading && !keys.data && <Loading what="keys" />}
      {keys.data?.length === 0 && <Empty>No keys yet.</Empty>}
      {keys.data && keys.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Prefix</th>
                <th scope="col">Scopes</th>
                <th scope="col">Profile</th>
                <th scope="col">Created</th>
                <th scope="col">State</th>
              </tr>
            </thead>
            <tbody>
              {keys.data.map((key) => (
                <tr key={key.id}>
                  <td data-label="Name">{key.name}</td>
                  <td data-label="Prefix">
                    <code>{key.prefix}…</code>
                  </td>
                  <td data-label="Scopes">{key.scopes.join(", ")}</td>
                  <td data-label="Profile">{profileName(key.profileId)}</td>
                  <td data-label="Created">
                    {when(key.createdAt)} by {name(key.createdBy)}
                  </td>
                  <td data-label="State">
                    {key.revokedAt ? (
                      `Revoked ${when(key.revokedAt)}`
                    ) : (
                      <>
                        <button type="button" class="secondary" aria-label={`Rotate ${key.name}`} onClick={() => rotate(key)}>
                          Rotate
                        </button>{" "}
                        <button type="button" class="danger" aria-label={`Revoke ${key.name}`} onClick={() => revoke(key)}>
                          Revoke
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {listed.data?.olderRevokedKeysOmitted && <p class="muted">Keys revoked before the 1,000 most recent revocations are not listed.</p>}
    </section>
  );
}

function CreateKey({
  ws,
  profiles,
  onCreated,
}: {
  ws: string;
  profiles: Schemas["AccessProfile"][];
  onCreated: (key: Schemas["CreatedApiKey"]) => void;
}) {
  const [name, setName] = useState("");
  const [scopes, setScopes] = useState<Scope[]>(["tools:call"]);
  // Unset means the first profile (the workspace's "default" when there is one): a tools:call key needs one.
  const [chosenProfile, setProfileId] = useState<string | null>(null);
  const profileId = chosenProfile ?? (profiles.find((p) => p.name === "default") ?? profiles[0])?.id ?? "";
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);
  const needsProfile = scopes.includes("tools:call") && !profileId;

  async function submit(event: Event) {
    event.preventDefault();
    if (needsProfile) return setError(new Error("A key with tools:call belongs to an access profile: choose one."));
    setBusy(true);
    setError(undefined);
    try {
      const body = { name, scopes, ...(profileId ? { profileId } : {}) };
      onCreated(await call(api.POST("/v1/workspaces/{ws}/keys", { params: { path: { ws } }, body })));
      setName("");
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-key-title">
      <h2 id="create-key-title">Create a key</h2>
      <label>
        Name
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Scopes</legend>
        {SCOPES.map(({ scope, hint }) => (
          <label key={scope} class="check">
            <input
              type="checkbox"
              checked={scopes.includes(scope)}
              onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, scope] : scopes.filter((s) => s !== scope))}
            />
            {scope} <span class="muted">({hint})</span>
          </label>
        ))}
      </fieldset>
      <label>
        Profile
        <select value={profileId} onChange={(e) => setProfileId(e.currentTarget.value)}>
          <option value="">No profile (keys without tools:call)</option>
          {profiles.map((p) => (
            <option key={p.id} value={p.id}>
              {p.name}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy || scopes.length === 0}>
        Create key
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

/** The secret exists only here, once: the API stores a hash and never shows it again. */
function NewSecret({ created, onDone }: { created: Schemas["CreatedApiKey"]; onDone: () => void }) {
  const [copied, setCopied] = useState(false);
  return (
    <div class="panel highlight" role="region" aria-label="New key secret">
      <p>
        Key <strong>{created.key.name}</strong> is ready. Copy its secret now: it is shown only this once.
      </p>
      <label>
        Secret
        <input readOnly value={created.secret} size={60} onFocus={(e) => e.currentTarget.select()} />
      </label>
      <button
        type="button"
        onClick={async () => {
          await navigator.clipboard.writeText(created.secret);
          setCopied(true);
        }}
      >
        {copied ? "Copied" : "Copy secret"}
      </button>{" "}
      <button type="button" class="secondary" onClick={onDone}>
        I have stored it
      </button>
    </div>
  );
}
