import type { WaitUntil } from "../lib/after-response.ts";

/** Who is calling /mcp: an API key with tools:call or an OAuth grant, bound to one workspace and profile. */
export interface Caller {
  workspaceId: string;
  keyId: string;
  /** Who made the call, as its log rows record it: `key:<key id>` or `oauth:<client_id>`. */
  actor: string;
  /** An OAuth caller's grant, named by the user who gave it; null for a key. */
  grantedBy: string | null;
  /** The API key or OAuth grant behind the call (mcp-caller.ts): relay routes and request states are scoped by it. */
  credential: string;
  profileId: string | null;
  /** Whose upstream grants the caller's calls use on services authorized per user (mcp-caller.ts). */
  grantSubject: string;
  origin: string;
  /**
   * Whether the request's credentials still authenticate this same caller (not revoked, same profile): a Code
   * Mode run asks before each inner call, since a run lasts up to a minute and a key may be revoked meanwhile.
   */
  stillAuthorized: () => Promise<boolean>;
}

/** One request's caller with what every handler needs to reach the workspace. */
export interface GatewayCore {
  env: Env;
  caller: Caller;
  waitUntil: WaitUntil;
}
