import type { ComponentType } from "preact";
import { useEffect, useState } from "preact/hooks";
import { ApiRequestError, api, call } from "./api.ts";
import { href, mayLeave, navigate, useRoute, type Screen } from "./router.ts";
import { Approvals } from "./screens/Approvals.tsx";
import { CodeRuns } from "./screens/CodeRuns.tsx";
import { Keys } from "./screens/Keys.tsx";
import { Logs } from "./screens/Logs.tsx";
import { Members } from "./screens/Members.tsx";
import { Overview } from "./screens/Overview.tsx";
import { Profiles } from "./screens/Profiles.tsx";
import type { ScreenProps } from "./screens/screen.ts";
import { Services } from "./screens/Services.tsx";
import { Tools } from "./screens/Tools.tsx";
import { SignIn, signOut } from "./SignIn.tsx";
import { useLoad } from "./ui/load.ts";
import { ErrorNote, Loading } from "./ui/status.tsx";
import { useTheme, type ThemeChoice } from "./ui/theme.ts";

const NAV: { screen: Screen; label: string; view: ComponentType<ScreenProps> }[] = [
  { screen: "overview", label: "Overview", view: Overview },
  { screen: "services", label: "Services", view: Services },
  { screen: "tools", label: "Tools", view: Tools },
  { screen: "profiles", label: "Profiles", view: Profiles },
  { screen: "keys", label: "Keys", view: Keys },
  { screen: "members", label: "Members", view: Members },
  { screen: "approvals", label: "Approvals", view: Approvals },
  { screen: "logs", label: "Logs", view: Logs },
  { screen: "runs", label: "Code Mode runs", view: CodeRuns },
];

/** How often the nav re-reads the pending approvals count. */
const PENDING_POLL_MS = 10_000;

export function App() {
  const route = useRoute();
  const whoami = useLoad(() => call(api.GET("/v1/whoami")), []);
  const workspaces = whoami.data?.workspaces ?? [];
  const [menuOpen, setMenuOpen] = useState(false);

  // Land on the first workspace the user belongs to.
  useEffect(() => {
    if (!route.ws && workspaces[0]) navigate(href(workspaces[0].id, "overview"));
  }, [route.ws, workspaces[0]?.id]);
  // A link followed on a phone closes the menu it was in.
  useEffect(() => setMenuOpen(false), [route.screen, route.ws, route.rest.join("/")]);

  if (whoami.error instanceof ApiRequestError && whoami.error.status === 401) return <SignIn onSignedIn={whoami.reload} />;
  if (!whoami.data) return whoami.error ? <ErrorNote error={whoami.error} /> : <Loading what="your account" />;
  if (workspaces.length === 0) return <p class="empty">{whoami.data.email} is not a member of any workspace yet.</p>;

  const ws = route.ws ?? workspaces[0]!.id;
  const isAdmin = workspaces.find((w) => w.id === ws)?.scopes.includes("admin") ?? false;
  const current = NAV.find((item) => item.screen === route.screen) ?? NAV[0]!;
  const View = current.view;
  return (
    <div class="shell">
      <header class="topbar">
        <button
          type="button"
          class="secondary menu-toggle"
          aria-expanded={menuOpen}
          aria-controls="screens-nav"
          onClick={() => setMenuOpen(!menuOpen)}
        >
          Menu
        </button>
        <span class="brand">Rayrun</span>
        <span class="workspace-picker">
          <label for="workspace-picker">Workspace</label>
          <select id="workspace-picker" value={ws} onChange={(e) => navigate(href(e.currentTarget.value, route.screen))}>
            {workspaces.map((w) => (
              <option key={w.id} value={w.id}>
                {w.name}
              </option>
            ))}
          </select>
        </span>
        <ThemeToggle />
        <span class="account">
          <span class="muted">{whoami.data.email}</span>
          <button type="button" class="secondary" onClick={() => mayLeave() && void signOut(whoami.reload)}>
            Sign out
          </button>
        </span>
      </header>
      <nav id="screens-nav" aria-label="Workspace screens" class={menuOpen ? "open" : undefined}>
        <ul>
          {NAV.map((item) => (
            <li key={item.screen}>
              <a href={href(ws, item.screen)} aria-current={item.screen === current.screen ? "page" : undefined}>
                {item.label}
                {item.screen === "approvals" && isAdmin && <PendingCount ws={ws} />}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        {/* Keyed by the whole path: nothing one tool's (or approval's) screen holds carries into the next one's. */}
        <View key={`${ws}/${current.screen}/${route.rest.join("/")}`} ws={ws} rest={route.rest} query={route.query} />
      </main>
    </div>
  );
}

/** The number of approvals waiting for a decision, beside Approvals in the nav. */
function PendingCount({ ws }: { ws: string }) {
  const pending = useLoad(
    async () =>
      (await call(api.GET("/v1/workspaces/{ws}/approvals", { params: { path: { ws }, query: { status: "pending", limit: 100 } } })))
        .approvals.length,
    [ws],
  );
  useEffect(() => {
    const timer = setInterval(pending.reload, PENDING_POLL_MS);
    addEventListener("rayrun:approvals-changed", pending.reload);
    return () => {
      clearInterval(timer);
      removeEventListener("rayrun:approvals-changed", pending.reload);
    };
  }, [pending.reload]);
  if (!pending.data) return null;
  return (
    <span class="badge" data-testid="pending-count">
      {" "}
      {pending.data}
      <span class="visually-hidden"> pending</span>
    </span>
  );
}

const THEMES: { choice: ThemeChoice; label: string }[] = [
  { choice: "system", label: "System" },
  { choice: "light", label: "Light" },
  { choice: "dark", label: "Dark" },
];

function ThemeToggle() {
  const { choice, choose } = useTheme();
  return (
    <span class="theme-picker">
      <label for="theme-picker">Theme</label>
      <select id="theme-picker" value={choice} onChange={(e) => choose(e.currentTarget.value as ThemeChoice)}>
        {THEMES.map((theme) => (
          <option key={theme.choice} value={theme.choice}>
            {theme.label}
          </option>
        ))}
      </select>
    </span>
  );
}
