// Access profiles: every client key belongs to one. Each has a default mode, a
// Code Mode discovery setting and risk rules; the matrix below shows every
// tool's effective mode under every profile, and changes it.
import { useState } from "preact/hooks";
import { ApiRequestError, api, call, type Schemas } from "../api.ts";
import { hrefWith, replaceRoute } from "../router.ts";
import { ConfirmDialog, type ConfirmRequest } from "../ui/ConfirmDialog.tsx";
import { useLoad } from "../ui/load.ts";
import { Pager } from "../ui/Pager.tsx";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import { ChangeNotice, loosens, MODES, ModeCell, type Mode, type PolicyChange, type Profile } from "./policy.tsx";
import type { ScreenProps } from "./screen.ts";

type Discovery = Profile["discovery"];
const DISCOVERIES: { value: Discovery; label: string }[] = [
  { value: "direct", label: "Direct: each tool is an MCP tool" },
  { value: "code", label: "Code Mode only: describe_tools and run_code" },
  { value: "both", label: "Both" },
];
const PAGE = 25;

export function Profiles({ ws, query }: ScreenProps) {
  const profiles = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/profiles", { params: { path: { ws } } }))).profiles, [ws]);
  const [confirming, setConfirming] = useState<ConfirmRequest>();
  const [notice, setNotice] = useState<string | null>(null);
  // The matrix re-reads when a profile's default or rules change what its cells say.
  const [changes, setChanges] = useState(0);
  const changed = (message: string) => {
    setNotice(message);
    profiles.reload();
    setChanges((n) => n + 1);
  };

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Profiles</h1>
      <p class="muted">
        Every client key belongs to one access profile. A tool&apos;s mode under a profile is its override, else the profile&apos;s default
        mode, held at least as strict as any risk rule of the profile the tool matches.
      </p>
      <CreateProfile ws={ws} onCreated={(profile) => changed(`Created profile ${profile.name} (default mode ${profile.defaultMode}).`)} />
      {notice && (
        <p class="ok" role="status">
          {notice}
        </p>
      )}
      <ErrorNote error={profiles.error} />
      {!profiles.data && !profiles.error && <Loading what="profiles" />}
      {profiles.data && <ProfileList ws={ws} profiles={profiles.data} confirm={setConfirming} onChanged={changed} />}
      {profiles.data && <Matrix ws={ws} query={query} generation={changes} confirm={setConfirming} />}
      <ConfirmDialog request={confirming} onClose={() => setConfirming(undefined)} />
    </section>
  );
}

function CreateProfile({ ws, onCreated }: { ws: string; onCreated: (profile: Profile) => void }) {
  const [name, setName] = useState("");
  // A new profile reaches nothing until an admin allows tools: block is the default, here and in the API.
  const [defaultMode, setDefaultMode] = useState<Mode>("block");
  const [discovery, setDiscovery] = useState<Discovery>("direct");
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const profile = await call(
        api.POST("/v1/workspaces/{ws}/profiles", { params: { path: { ws } }, body: { name, defaultMode, discovery } }),
      );
      setName("");
      setDefaultMode("block");
      onCreated(profile);
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="panel" onSubmit={submit} aria-labelledby="create-profile-title">
      <h2 id="create-profile-title">Create a profile</h2>
      <label>
        Name
        <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <fieldset>
        <legend>Default mode (for tools without an override)</legend>
        {MODES.map((mode) => (
          <label key={mode} class="check">
            <input type="radio" name="new-profile-mode" value={mode} checked={defaultMode === mode} onChange={() => setDefaultMode(mode)} />
            {mode}
            {mode === "block" && <span class="muted"> (recommended: allow tools one by one)</span>}
          </label>
        ))}
      </fieldset>
      <label>
        Discovery on /mcp
        <select value={discovery} onChange={(e) => setDiscovery(e.currentTarget.value as Discovery)}>
          {DISCOVERIES.map((d) => (
            <option key={d.value} value={d.value}>
              {d.label}
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Create profile
      </button>
      <ErrorNote error={error} />
    </form>
  );
}

function riskSummary(rules: Profile["riskRules"]): string {
  const parts = Object.entries(rules).map(
    ([hint, rule]) => `${hint}: ${rule.mode}${rule.whenMissing === "ignore" ? " (explicit only)" : ""}`,
  );
  return parts.length ? parts.join("; ") : "none";
}

function ProfileList(props: {
  ws: string;
  profiles: Profile[];
  confirm: (request: ConfirmRequest) => void;
  onChanged: (message: string) => void;
}) {
  const { ws, profiles, confirm, onChanged } = props;
  const [renaming, setRenaming] = useState<{ id: string; name: string } | null>(null);
  const [error, setError] = useState<unknown>(undefined);
  const path = (profileId: string) => ({ params: { path: { ws, profileId } } });

  const patch = async (profile: Profile, body: Schemas["UpdateAccessProfile"], message: string) => {
    setError(undefined);
    try {
      await call(api.PATCH("/v1/workspaces/{ws}/profiles/{profileId}", { ...path(profile.id), body }));
      onChanged(message);
    } catch (failure) {
      setError(failure);
    }
  };

  const setDefault = (profile: Profile, mode: Mode) => {
    const run = () => patch(profile, { defaultMode: mode }, `${profile.name}'s default mode is ${mode}.`);
    if (!loosens(profile.defaultMode, mode)) return void run();
    confirm({
      title: `Loosen ${profile.name}'s default mode?`,
      confirmLabel: `Change to ${mode}`,
      body: (
        <p>
          Every tool without an override under <strong>{profile.name}</strong> goes from <strong>{profile.defaultMode}</strong> to{" "}
          <strong>{mode}</strong> on its next call (risk rules still hold).
        </p>
      ),
      run,
    });
  };

  const remove = (profile: Profile) =>
    confirm({
      title: `Delete profile ${profile.name}?`,
      confirmLabel: "Delete profile",
      danger: true,
      typeToConfirm: profile.name,
      body: <p>Its per-tool and per-service modes go with it. A profile that an unrevoked key belongs to cannot be deleted.</p>,
      run: async () => {
        setError(undefined);
        try {
          await call(api.DELETE("/v1/workspaces/{ws}/profiles/{profileId}", path(profile.id)));
          onChanged(`Deleted profile ${profile.name}.`);
        } catch (failure) {
          setError(failure);
        }
      },
    });

  return (
    <>
      <h2>Profiles</h2>
      <InUseRefusal error={error} />
      <div class="table-wrap">
        <table class="stack">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Default mode</th>
              <th scope="col">Discovery (Code Mode)</th>
              <th scope="col">Risk rules</th>
              <th scope="col">Actions</th>
            </tr>
          </thead>
          <tbody>
            {profiles.map((profile) => (
              <tr key={profile.id}>
                <td data-label="Name">
                  {renaming?.id === profile.id ? (
                    <form
                      class="inline"
                      onSubmit={(e) => {
                        e.preventDefault();
                        void patch(profile, { name: renaming.name }, `Renamed ${profile.name} to ${renaming.name.trim()}.`);
                        setRenaming(null);
                      }}
                    >
                      <label>
                        New name for {profile.name}
                        <input
                          required
                          maxLength={100}
                          value={renaming.name}
                          onInput={(e) => setRenaming({ id: profile.id, name: e.currentTarget.value })}
                        />
                      </label>
                      <button type="submit">Save name</button>{" "}
                      <button type="button" class="secondary" onClick={() => setRenaming(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <strong>{profile.name}</strong>
                  )}
                </td>
                <td data-label="Default mode">
                  <label class="check">
                    <span class="visually-hidden">Default mode of {profile.name}</span>
                    <select value={profile.defaultMode} onChange={(e) => setDefault(profile, e.currentTarget.value as Mode)}>
                      {MODES.map((mode) => (
                        <option key={mode} value={mode}>
                          {mode}
                        </option>
                      ))}
                    </select>
                  </label>
                </td>
                <td data-label="Discovery">
                  <label class="check">
                    <span class="visually-hidden">Discovery of {profile.name}</span>
                    <select
                      value={profile.discovery}
                      onChange={(e) =>
                        void patch(
                          profile,
                          { discovery: e.currentTarget.value as Discovery },
                          `${profile.name}'s discovery is ${e.currentTarget.value}.`,
                        )
                      }
                    >
                      {DISCOVERIES.map((d) => (
                        <option key={d.value} value={d.value}>
                          {d.label}
                        </option>
                      ))}
                    </select>
                  </label>
                </td>
                <td data-label="Risk rules">{riskSummary(profile.riskRules)}</td>
                <td data-label="Actions" class="row-actions">
                  <button
                    type="button"
                    class="secondary"
                    aria-label={`Rename ${profile.name}`}
                    onClick={() => setRenaming({ id: profile.id, name: profile.name })}
                  >
                    Rename
                  </button>{" "}
                  <button type="button" class="danger" aria-label={`Delete ${profile.name}`} onClick={() => remove(profile)}>
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/** `profile_in_use` names the keys that still belong to the profile. */
function InUseRefusal({ error }: { error: unknown }) {
  if (!(error instanceof ApiRequestError) || error.code !== "profile_in_use") return <ErrorNote error={error} />;
  const keys = Array.isArray(error.details?.keys) ? (error.details.keys as { id: string; name: string }[]) : [];
  return (
    <div class="error" role="alert">
      <p>
        {error.message} ({error.code})
      </p>
      <p>Keys in it: {keys.map((key) => key.name).join(", ")}</p>
    </div>
  );
}

/** Tools × profiles: every cell is the tool's effective mode under the profile, and changes it. */
function Matrix(props: { ws: string; query: URLSearchParams; generation: number; confirm: (request: ConfirmRequest) => void }) {
  const { ws, query, generation, confirm } = props;
  const q = query.get("q") ?? "";
  const cursor = query.get("cursor") ?? undefined;
  const [edits, setEdits] = useState(0);
  const page = useLoad(
    () =>
      call(api.GET("/v1/workspaces/{ws}/policy/matrix", { params: { path: { ws }, query: { q: q || undefined, limit: PAGE, cursor } } })),
    [ws, q, cursor, generation, edits],
  );
  const [change, setChange] = useState<PolicyChange | null>(null);
  const go = (next: { q?: string; cursor?: string }) => replaceRoute(hrefWith(ws, "profiles", [], { q, ...next }));

  return (
    <section aria-labelledby="matrix-title">
      <h2 id="matrix-title">Tools × profiles</h2>
      <form class="filters" role="search" onSubmit={(e) => e.preventDefault()}>
        <label>
          Search tools
          <input type="search" value={q} onInput={(e) => go({ q: e.currentTarget.value, cursor: undefined })} />
        </label>
      </form>
      <ChangeNotice
        change={change}
        onUndone={() => {
          setChange(null);
          setEdits((n) => n + 1);
        }}
      />
      <ErrorNote error={page.error} />
      {!page.data && !page.error && <Loading what="the matrix" />}
      {page.data?.tools.length === 0 && <Empty>No tools match.</Empty>}
      {page.data && page.data.tools.length > 0 && (
        <>
          <div class="matrix-wrap">
            <table class="matrix" aria-label="Effective mode of each tool under each profile">
              <thead>
                <tr>
                  <th scope="col">Tool</th>
                  {page.data.profiles.map((profile) => (
                    <th scope="col" key={profile.id}>
                      {profile.name}
                      <span class="muted small"> (default {profile.defaultMode})</span>
                    </th>
                  ))}
                </tr>
              </thead>
              <tbody>
                {page.data.tools.map((tool) => (
                  <tr key={tool.uid}>
                    <th scope="row">
                      <a href={hrefWith(ws, "tools", [tool.publicName], {})}>{tool.publicName}</a>
                    </th>
                    {tool.modes.map((cell) => {
                      const profile = page.data!.profiles.find((p) => p.id === cell.profileId)!;
                      return (
                        <td key={cell.profileId}>
                          <ModeCell
                            ws={ws}
                            tool={tool}
                            cell={cell}
                            profile={profile}
                            confirm={confirm}
                            onChanged={(made) => {
                              setChange(made);
                              setEdits((n) => n + 1);
                            }}
                          />
                        </td>
                      );
                    })}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            pageSize={PAGE}
            total={page.data.total}
            shown={page.data.tools.length}
            start={Number(cursor ?? 0)}
            nextCursor={page.data.nextCursor}
            onPage={(next) => go({ cursor: next })}
          />
        </>
      )}
    </section>
  );
}
