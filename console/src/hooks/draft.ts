// The draft being edited: what the server holds (with its etag) and what the
// user typed. Saves send the etag the text was edited from; a stale one (412)
// keeps the user's text and fetches the newer draft, so the conflict can be
// shown side by side and resolved knowingly. Nothing the user typed is replaced
// without them asking, and unsaved text is kept in sessionStorage until it is
// saved or discarded, so a reload, a crash or a closed tab restores it.
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, ApiRequestError, call, type Schemas } from "../api.ts";
import { clearSavedDraft, readSavedDraft, writeSavedDraft } from "../ui/saved-drafts.ts";
import { checkConfig, pretty } from "./json.ts";
import { templateSource } from "./templates.ts";
import type { HookTool } from "./tool.ts";

export type HookDraft = Schemas["HookDraft"];

export interface DraftText {
  source: string;
  configText: string;
}

export interface Conflict {
  /** The newer draft someone else saved. */
  theirs: HookDraft;
  /** What this user tried to save. */
  mine: DraftText;
}

export interface DraftState {
  server: HookDraft | undefined;
  text: DraftText;
  /** The text that counts as unchanged: the server's draft, or the typed skeleton while the tool has none. */
  pristine: DraftText;
  /** The etag of the draft the text was edited from: a save sends it, so a newer draft is a conflict. */
  editedFrom: string;
  dirty: boolean;
  /** Unsaved text found in this tab's storage and put back into the editors. */
  restored: { savedAt: string; newerOnServer: boolean } | undefined;
  loadError: unknown;
  saving: boolean;
  /** The API's refusal of the last save (a config it refused is shown beside the config editor). */
  saveError: unknown;
  /** A client-side config problem that stopped the save. */
  configProblem: string | undefined;
  conflict: Conflict | undefined;
  /** The text this user had when they chose to load a newer draft instead: kept until the next save. */
  setAside: DraftText | undefined;
  lastSave: Schemas["SavedFormattedHookDraft"] | undefined;
  /** Bumped whenever `text` is replaced from outside the editors (load, formatted save, newer draft, template). */
  textGeneration: number;
}

const textOf = (draft: HookDraft): DraftText => ({ source: draft.source, configText: pretty(draft.config) });
const sameText = (a: DraftText, b: DraftText) => a.source === b.source && a.configText === b.configText;

/** `onSaved` hears the text the server stored (formatted when it parsed), which the editors now show. */
export function useHookDraft(ws: string, tool: HookTool, onSaved: (stored: DraftText) => void) {
  const toolUid = tool.uid;
  const params = { path: { ws, toolUid } };
  const [state, setState] = useState<DraftState>({
    server: undefined,
    text: { source: "", configText: "{}" },
    pristine: { source: "", configText: "{}" },
    editedFrom: "",
    dirty: false,
    restored: undefined,
    loadError: undefined,
    saving: false,
    saveError: undefined,
    configProblem: undefined,
    conflict: undefined,
    setAside: undefined,
    lastSave: undefined,
    textGeneration: 0,
  });
  const patch = (changes: Partial<DraftState>) => setState((previous) => ({ ...previous, ...changes }));

  const fetchDraft = () => call(api.GET("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", { params }));
  /** A tool without a saved draft starts from the typed skeleton, which counts as unchanged. */
  const pristineOf = (draft: HookDraft): DraftText =>
    draft.versionId === null && draft.source === "" ? { source: templateSource(tool, "skeleton"), configText: "{}" } : textOf(draft);

  /**
   * Puts the server's draft into the editors. The first load restores this tab's unsaved text instead, when
   * there is some; later loads (Reload, after a restore or reset) discard it, as the user asked.
   */
  const load = useCallback(
    async (restore: boolean) => {
      try {
        const draft = await fetchDraft();
        const pristine = pristineOf(draft);
        const saved = restore ? readSavedDraft(ws, toolUid) : null;
        if (!restore) clearSavedDraft(ws, toolUid);
        const restoredText = saved && !sameText(saved, pristine) ? { source: saved.source, configText: saved.configText } : undefined;
        setState((previous) => ({
          ...previous,
          server: draft,
          pristine,
          text: restoredText ?? pristine,
          editedFrom: restoredText ? saved!.baseEtag : draft.etag,
          dirty: restoredText !== undefined,
          restored: restoredText ? { savedAt: saved!.savedAt, newerOnServer: saved!.baseEtag !== draft.etag } : undefined,
          loadError: undefined,
          conflict: undefined,
          saveError: undefined,
          textGeneration: previous.textGeneration + 1,
        }));
      } catch (error) {
        patch({ loadError: error });
      }
    },
    [ws, toolUid],
  );

  useEffect(() => {
    void load(true);
  }, [load]);

  // Unsaved text lives in this tab's storage until it is saved or discarded.
  useEffect(() => {
    if (!state.server) return;
    if (state.dirty) {
      writeSavedDraft(ws, toolUid, { ...state.text, baseEtag: state.editedFrom, savedAt: new Date().toISOString() });
    } else clearSavedDraft(ws, toolUid);
  }, [state.text, state.dirty, state.editedFrom, state.server]);

  const edit = (changes: Partial<DraftText>) =>
    setState((previous) => {
      const text = { ...previous.text, ...changes };
      return {
        ...previous,
        text,
        dirty: !sameText(text, previous.pristine),
        configProblem: changes.configText === undefined ? previous.configProblem : undefined,
      };
    });

  /** Saves `text` against `etag`; a 412 turns into a conflict that keeps `text`. */
  const saveAgainst = async (text: DraftText, etag: string, note: string | undefined) => {
    const config = checkConfig(text.configText);
    if (!config.ok) {
      patch({ configProblem: config.message });
      return;
    }
    patch({ saving: true, saveError: undefined, configProblem: undefined });
    try {
      const saved = await call(
        api.PUT("/v1/workspaces/{ws}/tools/{toolUid}/hook/draft", {
          params: { ...params, header: { "if-match": etag } },
          body: { source: text.source, config: config.value, note: note || undefined },
        }),
      );
      // The server may have formatted the source: show what it stored, unless the user typed on meanwhile.
      const stored = await fetchDraft();
      const server =
        stored.etag === saved.etag ? stored : { source: text.source, config: stored.config, etag: saved.etag, versionId: saved.versionId };
      const pristine = textOf(server);
      setState((previous) => {
        const unchangedSince = sameText(previous.text, text);
        return {
          ...previous,
          server,
          pristine,
          editedFrom: server.etag,
          text: unchangedSince ? pristine : previous.text,
          textGeneration: unchangedSince ? previous.textGeneration + 1 : previous.textGeneration,
          dirty: unchangedSince ? false : !sameText(previous.text, pristine),
          restored: undefined,
          saving: false,
          conflict: undefined,
          setAside: undefined,
          lastSave: saved,
        };
      });
      onSaved(pristine);
    } catch (error) {
      if (error instanceof ApiRequestError && error.code === "precondition_failed") {
        try {
          const theirs = await fetchDraft();
          patch({ saving: false, conflict: { theirs, mine: text } });
        } catch (fetchError) {
          patch({ saving: false, saveError: fetchError });
        }
        return;
      }
      patch({ saving: false, saveError: error });
    }
  };

  return {
    state,
    edit,
    /** Discards unsaved text and loads the server's draft. */
    reload: () => load(false),
    save: (note?: string) => state.server && saveAgainst(state.text, state.editedFrom, note),
    /** Saves this user's text over the newer draft, which stays in history as its own version. */
    overwrite: (note?: string) => state.conflict && saveAgainst(state.conflict.mine, state.conflict.theirs.etag, note),
    /** Takes the newer draft into the editor; this user's text stays visible, set aside, until the next save. */
    takeTheirs: () =>
      setState((previous) =>
        previous.conflict
          ? {
              ...previous,
              server: previous.conflict.theirs,
              pristine: textOf(previous.conflict.theirs),
              editedFrom: previous.conflict.theirs.etag,
              text: textOf(previous.conflict.theirs),
              dirty: false,
              restored: undefined,
              setAside: previous.conflict.mine,
              conflict: undefined,
              textGeneration: previous.textGeneration + 1,
            }
          : previous,
      ),
    /** Puts text into the editors as if typed (e.g. a template). */
    replace: (changes: Partial<DraftText>) => {
      edit(changes);
      setState((previous) => ({ ...previous, textGeneration: previous.textGeneration + 1 }));
    },
    dismissRestored: () => patch({ restored: undefined }),
  };
}

export type HookDraftControls = ReturnType<typeof useHookDraft>;
