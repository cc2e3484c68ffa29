import type { ScreenProps } from "./screen.ts";

export function Overview({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Overview</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
