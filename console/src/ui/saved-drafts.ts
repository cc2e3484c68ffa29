// Unsaved hook drafts, kept in sessionStorage (this tab only, gone when it closes) until they are saved or
// discarded, so a crash, a reload or a navigation away restores them. Never an API key or a secret: only
// what the user typed into the hook source and config editors.
const PREFIX = "rayrun.draft.";

export interface SavedDraft {
  source: string;
  configText: string;
  /** The etag of the server draft the text was edited from: a save against it detects a newer one. */
  baseEtag: string;
  savedAt: string;
}

const keyOf = (ws: string, toolUid: string) => `${PREFIX}${ws}.${toolUid}`;

export function readSavedDraft(ws: string, toolUid: string): SavedDraft | null {
  try {
    const parsed: unknown = JSON.parse(sessionStorage.getItem(keyOf(ws, toolUid)) ?? "null");
    if (typeof parsed !== "object" || parsed === null) return null;
    const draft = parsed as Partial<SavedDraft>;
    return typeof draft.source === "string" && typeof draft.configText === "string" && typeof draft.baseEtag === "string"
      ? { source: draft.source, configText: draft.configText, baseEtag: draft.baseEtag, savedAt: String(draft.savedAt ?? "") }
      : null;
  } catch {
    return null;
  }
}

export function writeSavedDraft(ws: string, toolUid: string, draft: SavedDraft): void {
  try {
    sessionStorage.setItem(keyOf(ws, toolUid), JSON.stringify(draft));
  } catch {
    // Storage full or disabled: the leave guard still asks before anything is lost.
  }
}

export function clearSavedDraft(ws: string, toolUid: string): void {
  sessionStorage.removeItem(keyOf(ws, toolUid));
}

/** Signing out forgets every unsaved draft of this tab. */
export function clearAllSavedDrafts(): void {
  for (const key of Object.keys(sessionStorage)) if (key.startsWith(PREFIX)) sessionStorage.removeItem(key);
}
