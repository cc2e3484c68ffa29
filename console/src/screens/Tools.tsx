import type { ScreenProps } from "./screen.ts";

export function Tools({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Tools</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
