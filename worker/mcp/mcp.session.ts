import { ErrorCode, isInitializeRequest, type ClientCapabilities } from "@modelcontextprotocol/sdk/types.js";
import { base64Decode, base64UrlEncode, timingSafeEqual } from "../lib/crypto.ts";
import { methodOf } from "./mcp.body.ts";
import { relayedCapabilities } from "./mcp.capabilities.ts";
import { jsonRpcError } from "./mcp.errors.ts";

/**
 * A gateway MCP session, carried whole in the `Mcp-Session-Id` the gateway
 * answers `initialize` with. Signed, never stored: any isolate reads it back,
 * and the gateway stays stateless.
 */
export interface GatewaySession {
  workspaceId: string;
  keyId: string;
  protocolVersion: string;
  /** What the client declared in `initialize`: which server-to-client requests it answers. */
  capabilities: ClientCapabilities;
  /** Issue time, ms since the epoch. */
  issuedAt: number;
}

/** How long a session id is honoured; after that the client gets 404 and initializes again, as the spec says. */
export const MAX_SESSION_AGE_MS = 24 * 60 * 60 * 1000;
/** A session id longer than this is not one the gateway issued (capabilities are small objects). */
const MAX_SESSION_ID_CHARS = 4096;

const encoder = new TextEncoder();
const keys = new Map<string, Promise<CryptoKey>>();

function signingKey(secretsKey: string): Promise<CryptoKey> {
  // A key derived for this purpose only: the encryption key itself never signs.
  let key = keys.get(secretsKey);
  if (!key) {
    key = crypto.subtle
      .digest("SHA-256", encoder.encode(`rayrun-mcp-session:${secretsKey}`))
      .then((material) => crypto.subtle.importKey("raw", material, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]));
    keys.set(secretsKey, key);
  }
  return key;
}

async function sign(payload: string, secretsKey: string): Promise<string> {
  return base64UrlEncode(new Uint8Array(await crypto.subtle.sign("HMAC", await signingKey(secretsKey), encoder.encode(payload))));
}

export async function issueSessionId(session: GatewaySession, secretsKey: string): Promise<string> {
  const payload = base64UrlEncode(encoder.encode(JSON.stringify(session)));
  return `${payload}.${await sign(payload, secretsKey)}`;
}

/** The session, or null for an id the gateway did not sign, one past its age, or one issued to another key. */
export async function readSessionId(
  sessionId: string,
  caller: { workspaceId: string; keyId: string },
  secretsKey: string,
): Promise<GatewaySession | null> {
  if (sessionId.length > MAX_SESSION_ID_CHARS) return null;
  const [payload, signature, extra] = sessionId.split(".");
  if (!payload || !signature || extra !== undefined) return null;
  if (!timingSafeEqual(signature, await sign(payload, secretsKey))) return null;
  let session: GatewaySession;
  try {
    session = JSON.parse(new TextDecoder().decode(base64Decode(payload))) as GatewaySession;
  } catch {
    return null;
  }
  if (session.workspaceId !== caller.workspaceId || session.keyId !== caller.keyId) return null;
  if (!(Date.now() - session.issuedAt < MAX_SESSION_AGE_MS)) return null;
  return session;
}

/** The session a POST belongs to: none, the one its header names, or the one its `initialize` opens (`issued`). */
export interface RequestSession {
  session: GatewaySession | null;
  /** The new session id, for an `initialize`. */
  issued?: string;
  /** The session id's signature: unique per session, it names the session's call route. */
  routeSignature: string | null;
}

/**
 * Reads or opens the session. An `initialize` gets a new signed id carrying the
 * client's declared capabilities; a header naming a session the gateway did not
 * issue to this key (forged, expired, another key's) gets 404, as the spec
 * says, so the client initializes again. Without a header nothing changes:
 * the call runs with no capabilities.
 */
export async function resolveSession(
  env: Env,
  request: Request,
  caller: { workspaceId: string; keyId: string },
  parsedBody: unknown,
): Promise<RequestSession | Response> {
  // The method check first: the SDK's guard is a full schema parse, too dear for every tools/call.
  const initialize = (Array.isArray(parsedBody) ? parsedBody : [parsedBody]).find(
    (message) => methodOf(message) === "initialize" && isInitializeRequest(message),
  );
  if (initialize) {
    const session: GatewaySession = {
      workspaceId: caller.workspaceId,
      keyId: caller.keyId,
      protocolVersion: initialize.params.protocolVersion,
      capabilities: relayedCapabilities(initialize.params.capabilities),
      issuedAt: Date.now(),
    };
    const issued = await issueSessionId(session, env.SECRETS_KEY);
    // An id past the bound would never be honoured, and the capabilities are the client's to size: a header of
    // megabytes broke the response itself.
    if (issued.length > MAX_SESSION_ID_CHARS) {
      return jsonRpcError(
        200,
        ErrorCode.InvalidParams,
        `Invalid params: the declared sampling, elicitation and roots capabilities are too large for a session (its id would pass ${MAX_SESSION_ID_CHARS} characters)`,
        {},
        initialize.id,
      );
    }
    return { session, issued, routeSignature: signatureOf(issued) };
  }
  const header = request.headers.get("mcp-session-id");
  if (header === null) return { session: null, routeSignature: null };
  const session = await readSessionId(header, caller, env.SECRETS_KEY);
  if (!session) {
    return new Response(JSON.stringify({ jsonrpc: "2.0", error: { code: -32001, message: "Session not found" }, id: null }), {
      status: 404,
      headers: { "content-type": "application/json" },
    });
  }
  return { session, routeSignature: signatureOf(header) };
}

const signatureOf = (sessionId: string) => sessionId.slice(sessionId.indexOf(".") + 1);
