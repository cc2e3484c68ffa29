// The one way into Monaco: a dynamic import, so the editor is its own chunk and
// is fetched only when a Hooks tab renders. The promise is shared, so opening a
// second tool's hooks does not fetch it again.
import { useEffect, useState } from "preact/hooks";

type MonacoModule = typeof import("./monaco.ts");
let loading: Promise<MonacoModule> | undefined;

export function loadMonaco(): Promise<MonacoModule> {
  loading ??= import("./monaco.ts").catch((error: unknown) => {
    loading = undefined; // a failed fetch (offline, new deploy) may be retried
    throw error;
  });
  return loading;
}

export function useMonaco(): { module: MonacoModule | undefined; error: unknown } {
  const [state, setState] = useState<{ module: MonacoModule | undefined; error: unknown }>({ module: undefined, error: undefined });
  useEffect(() => {
    let current = true;
    loadMonaco().then(
      (module) => current && setState({ module, error: undefined }),
      (error: unknown) => current && setState({ module: undefined, error }),
    );
    return () => {
      current = false;
    };
  }, []);
  return state;
}
