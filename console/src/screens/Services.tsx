import type { ScreenProps } from "./screen.ts";

export function Services({ ws }: ScreenProps) {
  return (
    <section aria-labelledby="screen-title">
      <h1 id="screen-title">Services</h1>
      <p class="muted">Workspace {ws}.</p>
    </section>
  );
}
