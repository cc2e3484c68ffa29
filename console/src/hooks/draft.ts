// The draft being edited: what the server holds (with its etag) and what the
// user typed. Saves send the etag; a stale one (412) keeps the user's text and
// fetches the newer draft, so the conflict can be shown side by side and
// resolved knowingly. Nothing the user typed is replaced without them asking.
import { useCallback, useEffect, useState } from "preact/hooks";
import { api, ApiRequestError, call, type Schemas } from "../api.ts";
import { checkConfig, pretty } from "./json.ts";

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
  dirty: boolean;
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

export function useHookDraft(ws: string, toolUid: string, onSaved: () => void) {
  const params = { path: { ws, toolUid } };
  const [state, setState] = useState<DraftState>({
    server: undefined,
    text: { source: "", configText: "{}" },
    dirty: false,
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

  /** Replaces the editor's text with the server's draft (first load, after a restore or reset, or on request). */
  const reload = useCallback(async () => {
    try {
      const draft = await fetchDraft();
      setState((previous) => ({
        ...previous,
        server: draft,
        text: textOf(draft),
        dirty: false,
        loadError: undefined,
        conflict: undefined,
        saveError: undefined,
        textGeneration: previous.textGeneration + 1,
      }));
    } catch (error) {
      patch({ loadError: error });
    }
  }, [ws, toolUid]);

  useEffect(() => {
    void reload();
  }, [reload]);

  const edit = (changes: Partial<DraftText>) =>
    setState((previous) => {
      const text = { ...previous.text, ...changes };
      const server = previous.server;
      const dirty = !server || text.source !== server.source || text.configText !== pretty(server.config);
      return { ...previous, text, dirty, configProblem: changes.configText === undefined ? previous.configProblem : undefined };
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
      setState((previous) => {
        const unchangedSince = previous.text.source === text.source && previous.text.configText === text.configText;
        return {
          ...previous,
          server,
          text: unchangedSince ? textOf(server) : previous.text,
          textGeneration: unchangedSince ? previous.textGeneration + 1 : previous.textGeneration,
          dirty: !unchangedSince,
          saving: false,
          conflict: undefined,
          setAside: undefined,
          lastSave: saved,
        };
      });
      onSaved();
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
    reload,
    save: (note?: string) => state.server && saveAgainst(state.text, state.server.etag, note),
    /** Saves this user's text over the newer draft, which stays in history as its own version. */
    overwrite: (note?: string) => state.conflict && saveAgainst(state.conflict.mine, state.conflict.theirs.etag, note),
    /** Takes the newer draft into the editor; this user's text stays visible, set aside, until the next save. */
    takeTheirs: () =>
      setState((previous) =>
        previous.conflict
          ? {
              ...previous,
              server: previous.conflict.theirs,
              text: textOf(previous.conflict.theirs),
              dirty: false,
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
  };
}

export type HookDraftControls = ReturnType<typeof useHookDraft>;
