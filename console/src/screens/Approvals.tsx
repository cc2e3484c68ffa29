import type { ScreenProps } from "./screen.ts";

export function Approvals({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Approvals</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
