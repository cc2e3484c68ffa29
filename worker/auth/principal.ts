export const SCOPES = ["hooks:read", "hooks:write", "tools:call", "admin"] as const;
export type Scope = (typeof SCOPES)[number];

export const ROLES = ["admin", "editor", "viewer"] as const;
export type Role = (typeof ROLES)[number];

/** Where a change came from, recorded with every attributed write. */
export type Channel = "browser" | "api" | "cli";

/** Who is calling: an API key (bound to one workspace) or a browser user (member of several). */
export type Principal =
  | {
      kind: "key";
      id: string;
      workspaceId: string;
      scopes: ReadonlySet<Scope>;
      profileId: string | null;
      channel: Channel;
      /** Who created the key (`usr_…`, `key_…` or `bootstrap`): its owner, whose upstream grants it uses per user. */
      createdBy: string;
    }
  | { kind: "user"; id: string; email: string; channel: "browser" };

/** A principal resolved against one workspace: what it may do there. */
export interface Actor {
  id: string;
  kind: "key" | "user";
  channel: Channel;
  workspaceId: string;
  scopes: ReadonlySet<Scope>;
  role: Role | null;
}

const ROLE_SCOPES: Record<Role, Scope[]> = {
  admin: ["admin", "hooks:read", "hooks:write"],
  editor: ["hooks:read", "hooks:write"],
  viewer: ["hooks:read"],
};

/** `admin` implies reading and writing hooks; `tools:call` is never implied. */
export function effectiveScopes(granted: Iterable<Scope>): Set<Scope> {
  const scopes = new Set(granted);
  if (scopes.has("admin")) {
    scopes.add("hooks:read");
    scopes.add("hooks:write");
  }
  return scopes;
}

export const scopesForRole = (role: Role) => new Set(ROLE_SCOPES[role]);
