import { useState } from "preact/hooks";
import { clearAllSavedDrafts } from "./ui/saved-drafts.ts";

/**
 * Locally the gateway's dev login sets a signed session cookie; deployed,
 * Cloudflare Access signs the user in before the page loads, and /dev/login
 * answers 404.
 */
export function SignIn({ onSignedIn }: { onSignedIn: () => void }) {
  const [email, setEmail] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await fetch("/dev/login", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email }),
      });
      if (res.ok) return onSignedIn();
      const body = (await res.json().catch(() => null)) as { error?: { code?: string; message?: string } } | null;
      setError(
        res.status === 404
          ? "This gateway has no dev login: sign in through Cloudflare Access, then reload."
          : `${body?.error?.message ?? res.statusText} (${body?.error?.code ?? `http_${res.status}`})`,
      );
    } catch (failure) {
      setError(failure instanceof Error ? failure.message : String(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <main class="signin">
      <h1>Rayrun console</h1>
      <form onSubmit={submit}>
        <label for="signin-email">Email</label>
        <input
          id="signin-email"
          type="email"
          required
          autocomplete="email"
          value={email}
          onInput={(e) => setEmail(e.currentTarget.value)}
        />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
      <p class="muted">Local development signs in with the dev login; a deployed console is behind Cloudflare Access.</p>
    </main>
  );
}

/**
 * Ends the session: locally the dev login's cookie; deployed (no dev login, 404), Cloudflare Access's own
 * sign-out, which ends the Access session for this hostname. Unsaved drafts of this tab are forgotten.
 */
export async function signOut(onSignedOut: () => void): Promise<void> {
  clearAllSavedDrafts();
  const res = await fetch("/dev/logout", { method: "POST" });
  if (res.status === 404) {
    location.assign("/cdn-cgi/access/logout");
    return;
  }
  onSignedOut();
}
