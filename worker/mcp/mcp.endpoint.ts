import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { authenticateMcp } from "../auth/mcp-caller.ts";
import { LeaseUnavailable } from "../leases/holder.ts";
import { readJsonBody } from "./mcp.body.ts";
import type { Caller, GatewayCore } from "./mcp.caller.ts";
import { WORKSPACE_UNAVAILABLE } from "./mcp.core.ts";
import { jsonRpcError } from "./mcp.errors.ts";
import { BATCH_REFUSAL_CODE, batchRefusal, withWildcardAcceptSpelledOut } from "./mcp.hygiene.ts";
import { serveLegacy } from "./mcp.legacy.ts";
import { isModernRequest, serveModern } from "./mcp.modern.ts";
import { legacyParamsRefusal, paramsRefusal } from "./mcp.params.ts";

/**
 * The client endpoint, `/mcp`. Each POST is authenticated, read, checked, and
 * served by the layer of the protocol revision it speaks: 2026-07-28 when its
 * `_meta` names that revision (mcp.modern.ts), a 2025-era revision otherwise
 * (mcp.legacy.ts). Both call the one request core (mcp.core.ts).
 */
export async function handleMcpRequest(env: Env, request: Request, ctx: ExecutionContext): Promise<Response> {
  if (request.method !== "POST") {
    return jsonRpcError(405, ErrorCode.ConnectionClosed, "Use POST: this endpoint does not open server-initiated streams", {
      allow: "POST",
    });
  }
  try {
    return await serveMcp(env, request, ctx);
  } catch (error) {
    if (!(error instanceof LeaseUnavailable)) throw error;
    console.error("no lease for /mcp", error);
    return jsonRpcError(503, ErrorCode.InternalError, WORKSPACE_UNAVAILABLE, { "retry-after": "1" });
  }
}

async function serveMcp(env: Env, request: Request, ctx: ExecutionContext): Promise<Response> {
  const waitUntil = (promise: Promise<unknown>) => ctx.waitUntil(promise);
  const auth = await authenticateMcp(env, request, waitUntil);
  if (auth.kind === "refused") return jsonRpcError(auth.status, ErrorCode.InvalidRequest, auth.message, auth.headers);
  const caller: Caller = {
    workspaceId: auth.workspaceId,
    keyId: auth.actorId,
    actor: auth.actor,
    grantedBy: auth.grantedBy,
    credential: auth.credential,
    profileId: auth.profileId,
    grantSubject: auth.grantSubject,
    origin: new URL(request.url).origin,
    stillAuthorized: async () => {
      const again = await authenticateMcp(env, request, waitUntil);
      return (
        again.kind === "caller" &&
        again.workspaceId === auth.workspaceId &&
        again.actorId === auth.actorId &&
        again.credential === auth.credential &&
        again.profileId === auth.profileId
      );
    },
  };
  const core: GatewayCore = { env, caller, waitUntil };
  const body = await readJsonBody(withWildcardAcceptSpelledOut(request));
  const refusedBatch = batchRefusal(body.request, body.parsedBody);
  if (refusedBatch) return jsonRpcError(400, BATCH_REFUSAL_CODE, refusedBatch);
  const refusedParams = paramsRefusal(body.parsedBody);
  if (refusedParams) return refusedParams;
  if (isModernRequest(body.request, body.parsedBody)) return serveModern(core, body.request, body.parsedBody);
  return legacyParamsRefusal(body.parsedBody) ?? serveLegacy(core, request, body);
}
