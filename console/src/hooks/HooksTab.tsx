// The Hooks tab for one tool (issue 15, item 4): editor, test console, deploy
// and history. Loaded on demand by the Tools screen, so it and Monaco stay out
// of the console's initial JavaScript.
export interface HooksTabProps {
  workspaceId: string;
  /** The tool's public name, e.g. `demo__search_release_notes`. */
  toolName: string;
}

export default function HooksTab({ toolName }: HooksTabProps) {
  return (
    <section aria-labelledby="hooks-tab-title">
      <h2 id="hooks-tab-title">Hooks for {toolName}</h2>
      <p class="muted">The hook editor is not built yet.</p>
    </section>
  );
}
