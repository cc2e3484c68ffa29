import type { ConsentDescription } from "@cloudflare/workers-oauth-provider";

/** A workspace and access profile the signed-in admin may grant. */
export interface GrantChoice {
  workspaceId: string;
  workspaceName: string;
  profileId: string;
  profileName: string;
}

/** Every profile in every workspace where the user is an admin (not one being removed): what a grant may be bound to. */
export async function grantChoices(db: D1Database, userId: string): Promise<GrantChoice[]> {
  const { results } = await db
    .prepare(
      `SELECT w.id AS workspaceId, w.name AS workspaceName, p.id AS profileId, p.name AS profileName
       FROM memberships m JOIN workspaces w ON w.id = m.workspace_id JOIN access_profiles p ON p.workspace_id = w.id
       WHERE m.user_id = ? AND m.role = 'admin' AND m.removal_started_at IS NULL ORDER BY w.name, w.id, p.name`,
    )
    .bind(userId)
    .all<GrantChoice>();
  return results;
}

/** Everything the client sent (name, redirect URI, scopes) is attacker-chosen: escape all of it. */
const escape = (value: string) => value.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

export const choiceValue = (choice: Pick<GrantChoice, "workspaceId" | "profileId">) => `${choice.workspaceId} ${choice.profileId}`;

export function consentPage(details: ConsentDescription, handle: string, email: string, choices: GrantChoice[]): string {
  const name = escape(details.clientName);
  const options = choices
    .map(
      (choice) =>
        `<option value="${escape(choiceValue(choice))}">${escape(choice.workspaceName)} · profile ${escape(choice.profileName)}</option>`,
    )
    .join("");
  const loopback = details.redirectIsLoopback
    ? "<p><strong>This sends access to an app on this computer.</strong> Continue only if you just started connecting from it.</p>"
    : "";
  return page(
    `Connect ${name} to Rayrun`,
    `<h1>Allow ${name} to call tools?</h1>
<p>This app registered itself; its name is not verified. Access will be sent to <strong>${escape(details.redirectHost)}</strong>.</p>
${loopback}
<p>Signed in as ${escape(email)}. The app gets the <code>tools:call</code> scope: it may list and call the tools the chosen access profile allows, under its policy and hooks, until an admin revokes the grant.</p>
<form method="post">
  <input type="hidden" name="handle" value="${escape(handle)}">
  <label>Workspace and access profile <select name="target" required>${options}</select></label>
  <p><button name="decision" value="approve">Allow</button> <button name="decision" value="deny">Deny</button></p>
</form>`,
  );
}

/** A page for what went wrong, with no client-controlled markup. */
export function messagePage(title: string, message: string): string {
  return page(escape(title), `<h1>${escape(title)}</h1><p>${escape(message)}</p>`);
}

/**
 * Local development only (DEV_LOGIN=on): the sign-in page offers the dev login
 * in place, so an MCP client's authorization link works in a fresh browser.
 */
export function devSignInPage(): string {
  return page(
    "Sign in to Rayrun first",
    `<h1>Sign in to Rayrun first</h1>
<p>Local development: sign in with the dev login as a workspace admin, then this page reloads.</p>
<form id="dev-login"><label>Email <input name="email" type="email" value="dev@rayrun.local" required></label> <button>Sign in</button></form>
<script>
document.getElementById("dev-login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const email = new FormData(event.target).get("email");
  const res = await fetch("/dev/login", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ email }) });
  if (res.ok) location.reload(); else alert((await res.json()).error.message);
});
</script>`,
  );
}

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${title}</title></head>
<body><main>${body}</main></body></html>`;
}
