import { useCallback, useEffect, useState } from "preact/hooks";

export interface Loaded<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  reload: () => void;
}

const sameDeps = (a: unknown[], b: unknown[]) => a.length === b.length && a.every((dep, i) => Object.is(dep, b[i]));

/**
 * Runs `load` when `deps` change (and on `reload`). A reload keeps the last data while it is in flight;
 * data loaded for other deps (another tool, another workspace) is never returned, not even for the one
 * render before the new load starts, so one screen never shows another's data.
 */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ deps: unknown[] | undefined; data: T | undefined; error: unknown; loading: boolean }>({
    deps: undefined,
    data: undefined,
    error: undefined,
    loading: true,
  });
  const [generation, setGeneration] = useState(0);
  useEffect(() => {
    let current = true;
    const loadedFor = deps;
    setState((previous) => ({ ...previous, loading: true }));
    load().then(
      (data) => current && setState({ deps: loadedFor, data, error: undefined, loading: false }),
      (error: unknown) =>
        current &&
        setState((previous) => ({
          deps: loadedFor,
          data: previous.deps && sameDeps(previous.deps, loadedFor) ? previous.data : undefined,
          error,
          loading: false,
        })),
    );
    return () => {
      current = false;
    };
    // eslint-style exhaustive deps are the caller's: `deps` says when to reload.
  }, [...deps, generation]);
  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const fresh = state.deps !== undefined && sameDeps(state.deps, deps);
  return fresh
    ? { data: state.data, error: state.error, loading: state.loading, reload }
    : { data: undefined, error: undefined, loading: true, reload };
}
