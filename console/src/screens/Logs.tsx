import type { ScreenProps } from "./screen.ts";

export function Logs({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Logs</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
