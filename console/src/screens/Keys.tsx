import type { ScreenProps } from "./screen.ts";

export function Keys({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Keys</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
