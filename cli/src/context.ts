import { createApiClient, unwrap, type ApiClient } from "./api/client.ts";
import { CliError, EXIT } from "./errors.ts";

export interface GlobalOptions {
  apiUrl?: string;
  apiKey?: string;
  workspace?: string;
  json?: boolean;
}

/** What every command needs: the typed client, the workspace, and how to print. */
export interface Context {
  api: ApiClient;
  baseUrl: string;
  workspace: string;
  json: boolean;
  /** Resolves an API call to its data or throws the API's error. */
  call<T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T>;
}

/** Flags win over the environment; a key is never printed, so it is never echoed in errors either. */
export async function createContext(options: GlobalOptions, env: NodeJS.ProcessEnv = process.env): Promise<Context> {
  const baseUrl = options.apiUrl ?? env.RAYRUN_API_URL;
  const apiKey = options.apiKey ?? env.RAYRUN_API_KEY;
  if (!baseUrl)
    throw new CliError(
      "Set RAYRUN_API_URL or pass --api-url (the gateway's origin, e.g. https://gateway.example.com)",
      EXIT.usage,
      "missing_api_url",
    );
  if (!apiKey) throw new CliError("Set RAYRUN_API_KEY or pass --api-key (an API key, rr_…)", EXIT.usage, "missing_api_key");
  try {
    new URL(baseUrl);
  } catch {
    throw new CliError(`--api-url is not a URL: ${baseUrl}`, EXIT.usage, "invalid_api_url");
  }
  const api = createApiClient({ baseUrl, apiKey, client: "rayrun-cli" });
  const call = <T>(pending: Promise<{ data?: T; error?: unknown; response: Response }>) => unwrap(baseUrl, pending);
  const workspace = options.workspace ?? env.RAYRUN_WORKSPACE ?? (await onlyWorkspace(api, call));
  return { api, baseUrl, workspace, json: options.json ?? false, call };
}

async function onlyWorkspace(api: ApiClient, call: Context["call"]): Promise<string> {
  const me = await call(api.GET("/v1/whoami"));
  if (me.workspaces.length === 1) return me.workspaces[0]!.id;
  const list = me.workspaces.map((w) => `${w.id} (${w.name})`).join(", ");
  throw new CliError(
    me.workspaces.length === 0
      ? "This credential reaches no workspace"
      : `This credential reaches several workspaces; pass --workspace or set RAYRUN_WORKSPACE: ${list}`,
    EXIT.usage,
    "workspace_required",
  );
}
