import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../http/app.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import { leaseClock } from "./clock.ts";
import type { ChangeInForce, ChangeWindow } from "./lease.types.ts";
import { isolateLeases, LeaseUnavailable } from "./holder.ts";

const READS = new Set(["GET", "HEAD", "OPTIONS"]);

/** The header every change route answers with: when the change took effect everywhere (ISO 8601). */
export const EFFECTIVE_AT_HEADER = "rayrun-effective-at";

/**
 * Route middleware, after authorisation (it is part of `guard`): a request that
 * may write to a workspace opens a change window before the route runs and
 * closes it afterwards, whatever the outcome, since a failed request may have
 * written part of its change. While a window is open, leases are granted
 * unsettled, so nothing an isolate reads then is kept past its lease; closing
 * moves the version (docs/leases.md). Every write route passes here, so none
 * can change what calls read without every isolate picking it up.
 */
export function changeWindow(): MiddlewareHandler<AppEnv> {
  return async function changeWindow(c, next) {
    const workspaceId = c.req.param("ws");
    if (!workspaceId || READS.has(c.req.method)) return next();
    let id: string;
    try {
      id = await workspaceClient(c.env, workspaceId).beginChange();
    } catch (error) {
      // Nothing is written without a window: a change no isolate would ever pick up must not happen.
      throw new LeaseUnavailable(workspaceId, error);
    }
    const window: ChangeWindow = { workspaceId, id, ended: null };
    c.set("change", window);
    try {
      await next();
    } finally {
      window.ended ??= endWindow(c.env, window);
      // A window that cannot be closed stays open, so grants stay unsettled and every isolate keeps
      // re-reading until the object closes it as stale: the change still reaches them all.
      await window.ended.catch((error: unknown) => console.error("change window left open", error));
    }
  };
}

/**
 * For a route whose change calls depend on: closes its window and waits until
 * no isolate can act on the state before it, then stamps the answer with the
 * time that happened. Returns that time (ISO 8601).
 */
export async function changeInForce(c: Context<AppEnv>): Promise<string> {
  const window = c.get("change");
  window.ended ??= endWindow(c.env, window);
  let inForce: ChangeInForce;
  try {
    inForce = await window.ended;
  } catch (error) {
    throw new LeaseUnavailable(window.workspaceId, error);
  }
  await leaseClock.sleep(inForce.waitMs);
  const effectiveAt = new Date(inForce.effectiveAt).toISOString();
  c.header(EFFECTIVE_AT_HEADER, effectiveAt);
  return effectiveAt;
}

/**
 * This isolate gives its own leases on the workspace up first, so the change
 * waits only for other isolates' (none, when one isolate serves everything).
 */
function endWindow(env: Env, window: ChangeWindow): Promise<ChangeInForce> {
  isolateLeases.relinquish(window.workspaceId);
  return workspaceClient(env, window.workspaceId).endChange(window.id, isolateLeases.id);
}
