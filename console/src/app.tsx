import type { ComponentType } from "preact";
import { useEffect } from "preact/hooks";
import { ApiRequestError, api, call } from "./api.ts";
import { href, navigate, useRoute, type Screen } from "./router.ts";
import { Approvals } from "./screens/Approvals.tsx";
import { CodeRuns } from "./screens/CodeRuns.tsx";
import { Keys } from "./screens/Keys.tsx";
import { Logs } from "./screens/Logs.tsx";
import { Overview } from "./screens/Overview.tsx";
import type { ScreenProps } from "./screens/screen.ts";
import { Services } from "./screens/Services.tsx";
import { Tools } from "./screens/Tools.tsx";
import { SignIn } from "./SignIn.tsx";
import { useLoad } from "./ui/load.ts";
import { ErrorNote, Loading } from "./ui/status.tsx";

const NAV: { screen: Screen; label: string; view: ComponentType<ScreenProps> }[] = [
  { screen: "overview", label: "Overview", view: Overview },
  { screen: "services", label: "Services", view: Services },
  { screen: "tools", label: "Tools", view: Tools },
  { screen: "keys", label: "Keys", view: Keys },
  { screen: "approvals", label: "Approvals", view: Approvals },
  { screen: "logs", label: "Logs", view: Logs },
  { screen: "runs", label: "Code Mode runs", view: CodeRuns },
];

export function App() {
  const route = useRoute();
  const whoami = useLoad(() => call(api.GET("/v1/whoami")), []);
  const workspaces = whoami.data?.workspaces ?? [];

  // Land on the first workspace the user belongs to.
  useEffect(() => {
    if (!route.ws && workspaces[0]) navigate(href(workspaces[0].id, "overview"));
  }, [route.ws, workspaces[0]?.id]);

  if (whoami.error instanceof ApiRequestError && whoami.error.status === 401) return <SignIn onSignedIn={whoami.reload} />;
  if (!whoami.data) return whoami.error ? <ErrorNote error={whoami.error} /> : <Loading what="your account" />;
  if (workspaces.length === 0) return <p class="empty">{whoami.data.email} is not a member of any workspace yet.</p>;

  const ws = route.ws ?? workspaces[0]!.id;
  const current = NAV.find((item) => item.screen === route.screen) ?? NAV[0]!;
  const View = current.view;
  return (
    <div class="shell">
      <header class="topbar">
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
        <span class="muted">{whoami.data.email}</span>
      </header>
      <nav aria-label="Workspace screens">
        <ul>
          {NAV.map((item) => (
            <li key={item.screen}>
              <a href={href(ws, item.screen)} aria-current={item.screen === current.screen ? "page" : undefined}>
                {item.label}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <main>
        <View key={`${ws}/${current.screen}`} ws={ws} rest={route.rest} />
      </main>
    </div>
  );
}
