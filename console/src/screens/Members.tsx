import { useState } from "preact/hooks";
import { api, call, type Schemas } from "../api.ts";
import { when } from "../ui/format.ts";
import { useLoad } from "../ui/load.ts";
import { Empty, ErrorNote, Loading } from "../ui/status.tsx";
import type { ScreenProps } from "./screen.ts";

type Role = Schemas["Member"]["role"];
const ROLES: { role: Role; hint: string }[] = [
  { role: "viewer", hint: "reads hooks, tools and logs" },
  { role: "editor", hint: "edits and deploys hooks" },
  { role: "admin", hint: "everything, members and keys included" },
];

/** The people who sign in to the console for this workspace: add one, change a role, remove one. */
export function Members({ ws }: ScreenProps) {
  const members = useLoad(async () => (await call(api.GET("/v1/workspaces/{ws}/members", { params: { path: { ws } } }))).members, [ws]);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const [removed, setRemoved] = useState<Schemas["RemovedMember"] | null>(null);

  /** Adds the member or changes their role; false (the error shown) when the API refused. */
  async function setRole(email: string, role: Role): Promise<boolean> {
    setActionError(undefined);
    try {
      await call(api.PUT("/v1/workspaces/{ws}/members", { params: { path: { ws } }, body: { email, role } }));
      members.reload();
      return true;
    } catch (error) {
      // A refused role change (`last_admin`) is shown; the role select goes back to the role the member still has.
      setActionError(error);
      members.reload();
      return false;
    }
  }

  async function remove(member: Schemas["Member"]) {
    const question =
      `Remove ${member.email} from this workspace? Their console access ends, and the keys they created, ` +
      "the apps they let in and their own upstream authorizations are revoked.";
    if (!confirm(question)) return;
    setActionError(undefined);
    try {
      const path = { ws, userId: member.id };
      setRemoved(await call(api.DELETE("/v1/workspaces/{ws}/members/{userId}", { params: { path } })));
      members.reload();
    } catch (error) {
      setActionError(error);
    }
  }

  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Members</h1>
      <AddMember onAdd={setRole} />
      {removed && <RemovedNote removed={removed} />}
      <h2>Members</h2>
      <ErrorNote error={actionError ?? members.error} />
      {members.loading && !members.data && <Loading what="members" />}
      {members.data?.length === 0 && <Empty>No members yet: keys alone reach this workspace.</Empty>}
      {members.data && members.data.length > 0 && (
        <div class="table-wrap">
          <table class="stack">
            <thead>
              <tr>
                <th scope="col">Email</th>
                <th scope="col">Role</th>
                <th scope="col">Added</th>
                <th scope="col">Remove</th>
              </tr>
            </thead>
            <tbody>
              {members.data.map((member) => (
                <tr key={member.id}>
                  <td data-label="Email">{member.email}</td>
                  <td data-label="Role">
                    <select
                      aria-label={`Role of ${member.email}`}
                      value={member.role}
                      onChange={(e) => void setRole(member.email, e.currentTarget.value as Role)}
                    >
                      {ROLES.map(({ role }) => (
                        <option key={role} value={role}>
                          {role}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td data-label="Added">{when(member.createdAt)}</td>
                  <td data-label="Remove">
                    <button type="button" class="danger" aria-label={`Remove ${member.email}`} onClick={() => void remove(member)}>
                      Remove
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

function AddMember({ onAdd }: { onAdd: (email: string, role: Role) => Promise<boolean> }) {
  const [email, setEmail] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    try {
      if (await onAdd(email, role)) setEmail("");
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="panel" onSubmit={submit} aria-labelledby="add-member-title">
      <h2 id="add-member-title">Add a member</h2>
      <label>
        Email
        <input type="email" required maxLength={320} value={email} onInput={(e) => setEmail(e.currentTarget.value)} />
      </label>
      <label>
        Role
        <select value={role} onChange={(e) => setRole(e.currentTarget.value as Role)}>
          {ROLES.map(({ role: choice, hint }) => (
            <option key={choice} value={choice}>
              {choice} ({hint})
            </option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={busy}>
        Add member
      </button>
    </form>
  );
}

/** What a removal took with it, as the API answered. */
function RemovedNote({ removed }: { removed: Schemas["RemovedMember"] }) {
  const keys = removed.revokedKeys.length;
  const kept = removed.sharedGrantsAuthorized.filter((grant) => !grant.revoked).map((grant) => grant.service ?? grant.serviceId);
  return (
    <p class="panel highlight" role="status">
      Removed {removed.email}. Revoked {keys} {keys === 1 ? "key" : "keys"}, {removed.oauthGrants} app{" "}
      {removed.oauthGrants === 1 ? "grant" : "grants"} and {removed.upstreamGrants} upstream{" "}
      {removed.upstreamGrants === 1 ? "authorization" : "authorizations"}
      {removed.cancelledApprovals.length > 0 &&
        `, and ended ${removed.cancelledApprovals.length} ${removed.cancelledApprovals.length === 1 ? "approval" : "approvals"} they were waiting for`}
      .
      {kept.length > 0 &&
        ` Kept the shared upstream ${kept.length === 1 ? "authorization" : "authorizations"} they made (${kept.join(", ")}): authorize ${kept.length === 1 ? "it" : "them"} again with a team account.`}
    </p>
  );
}
