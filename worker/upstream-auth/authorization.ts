import { invalidateCatalog } from "../calls/catalog.ts";
import { base64UrlEncode } from "../lib/crypto.ts";
import { publicUrl } from "../oauth/oauth.config.ts";
import { UpstreamFailure, type UpstreamTarget } from "../services/upstream.ts";
import { workspaceClient } from "../workspaces/workspace.client.ts";
import {
  SHARED_SUBJECT,
  type FlowPurpose,
  type GrantSubject,
  type TokenAnswer,
  type TokenFailureCode,
  type TokenVersion,
} from "./grants.do.ts";
import { markPending, type ServiceOAuth } from "./oauth.store.ts";
import { resourceCovers } from "./oauth.server.ts";
import { authorizationRequest } from "./oauth.tokens.ts";

/** The gateway's routes of the flow, on PUBLIC_URL's origin (the redirect URI registered with every authorization server). */
export const START_PATH = "/oauth/upstream/start";
export const CALLBACK_PATH = "/oauth/upstream/callback";
/** The gateway's client ID metadata document, for authorization servers that take a URL as client id. */
export const CLIENT_METADATA_PATH = "/oauth/upstream/client-metadata.json";

export const redirectUri = (origin: string) => `${origin}${CALLBACK_PATH}`;
export const clientMetadataUrl = (origin: string) => `${origin}${CLIENT_METADATA_PATH}`;

/** The grant a caller's call uses: the workspace's in shared mode, the caller's own per user. */
export const grantSubjectFor = (oauth: ServiceOAuth, callerSubject: GrantSubject): GrantSubject =>
  oauth.mode === "shared" ? SHARED_SUBJECT : callerSubject;

/** `user:<id>` subjects must open their link signed in as that user; other subjects hold the link alone. */
const subjectUser = (subject: GrantSubject) => (subject.startsWith("user:") ? subject.slice("user:".length) : null);

/** 20 random bytes, base64url: a flow id or a state, prefixed with the workspace whose Durable Object holds it. */
const randomHandle = (workspaceId: string) => `${workspaceId}.${base64UrlEncode(crypto.getRandomValues(new Uint8Array(20)))}`;

/** The workspace a flow handle or state names (the part before the first dot); null when it names none. */
export function handleWorkspace(handle: string): string | null {
  const at = handle.indexOf(".");
  return at > 0 && /^ws_[a-z0-9]+$/.test(handle.slice(0, at)) ? handle.slice(0, at) : null;
}

export interface AuthorizationLink {
  /** The gateway link that starts the flow in a browser (it binds the flow to that browser, then goes to the server). */
  authorizationUrl: string;
  expiresAt: string;
}

export interface FlowInput {
  workspaceId: string;
  serviceId: string;
  oauth: ServiceOAuth;
  subject: GrantSubject;
  purpose: FlowPurpose;
  /** Who asks: the admin's user or key id, or the caller's subject. */
  initiator: string;
  /** The user who must open the link signed in; null when the link alone is enough (keys). */
  initiatorUser: string | null;
  returnTo: string | null;
}

/** OAuth needs the gateway's public origin: it is the redirect URI's. */
export class OAuthNotConfigured extends Error {
  constructor() {
    super("Upstream OAuth needs PUBLIC_URL (the gateway's public origin), where the authorization servers send the browser back");
    this.name = "OAuthNotConfigured";
  }
}

export function gatewayOrigin(env: Env): string {
  const origin = publicUrl(env);
  if (!origin) throw new OAuthNotConfigured();
  return origin;
}

/**
 * A new authorization: PKCE verifier and `state` (random, bound to the
 * workspace by its prefix and to the service, subject and initiator in the
 * workspace Durable Object), stored with the authorization server's URL.
 */
export async function beginAuthorization(env: Env, input: FlowInput): Promise<AuthorizationLink> {
  const origin = gatewayOrigin(env);
  const flowId = randomHandle(input.workspaceId);
  const state = randomHandle(input.workspaceId);
  const request = await authorizationRequest(input.oauth.server, redirectUri(origin), state);
  const { expiresAt } = await workspaceClient(env, input.workspaceId).createOAuthFlow({
    flowId,
    state,
    serviceId: input.serviceId,
    subject: input.subject,
    purpose: input.purpose,
    initiator: input.initiator,
    initiatorUser: input.initiatorUser,
    codeVerifier: request.codeVerifier,
    authorizeUrl: request.url,
    returnTo: input.returnTo,
  });
  return { authorizationUrl: startLink(origin, flowId), expiresAt };
}

const startLink = (origin: string, flowId: string) => `${origin}${START_PATH}?flow=${encodeURIComponent(flowId)}`;

/** A caller's link to authorize their own grant: the open one if it has time left, else a new one. */
async function callerLink(
  env: Env,
  workspaceId: string,
  serviceId: string,
  oauth: ServiceOAuth,
  subject: GrantSubject,
): Promise<AuthorizationLink> {
  const reusable = await workspaceClient(env, workspaceId).reusableOAuthFlow(serviceId, subject);
  if (reusable) return { authorizationUrl: startLink(gatewayOrigin(env), reusable.flowId), expiresAt: reusable.expiresAt };
  return beginAuthorization(env, {
    workspaceId,
    serviceId,
    oauth,
    subject,
    purpose: "caller",
    initiator: subject,
    initiatorUser: subjectUser(subject),
    returnTo: null,
  });
}

/** Why a call cannot carry a token: the code the caller gets, with its message and details. */
export interface AuthorizationRefusal {
  code: "upstream_authorization_required" | TokenFailureCode;
  message: string;
  details: Record<string, unknown>;
}

export interface CallAuthorization {
  env: Env;
  workspaceId: string;
  serviceId: string;
  serviceSlug: string;
  oauth: ServiceOAuth | null;
  /** The caller's own subject (used per user). */
  callerSubject: GrantSubject;
}

/**
 * The target with the grant's access token; its session is the grant's own, kept while the token is the same
 * (the version names the grant too: a session made with a deleted grant's token is never reused for a new one).
 */
function withToken(target: UpstreamTarget, subject: GrantSubject, answer: { accessToken: string; version: TokenVersion }): UpstreamTarget {
  return {
    ...target,
    cacheKey: `${target.cacheKey}:${subject}`,
    credential: answer.version,
    headers: { ...target.headers, authorization: `Bearer ${answer.accessToken}` },
  };
}

/**
 * Step 4's credentials: `send` runs with the caller's grant's access token
 * (the Durable Object refreshes it ahead of expiry), and once more after a
 * refresh when the upstream answers 401. A service without OAuth gets its
 * target as it is. No token is ever returned or logged: it stays in the
 * target's headers, which only the upstream request reads.
 */
export async function withUpstreamAuthorization<T>(
  call: CallAuthorization,
  target: UpstreamTarget,
  send: (target: UpstreamTarget) => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; refusal: AuthorizationRefusal }> {
  const { oauth } = call;
  if (!oauth) return { ok: true, value: await send(target) };
  // A token goes only to the resource it was issued for (RFC 8707), never to another URL the service was pointed at.
  if (!resourceCovers(oauth.server.resource, new URL(target.url))) {
    return {
      ok: false,
      refusal: {
        code: "upstream_authorization_required",
        message: `The service's URL is not the resource its grants are for (${oauth.server.resource}); connect it again`,
        details: { service: call.serviceSlug, mode: oauth.mode },
      },
    };
  }
  const subject = grantSubjectFor(oauth, call.callerSubject);
  const workspace = workspaceClient(call.env, call.workspaceId);
  const ask = (rejectedVersion?: TokenVersion) =>
    workspace.upstreamAccessToken({
      serviceId: call.serviceId,
      subject,
      server: oauth.server,
      sealedClientSecret: oauth.sealedClientSecret,
      ...(rejectedVersion === undefined ? {} : { rejectedVersion }),
    });
  let answer = await ask();
  for (let attempt = 0; ; attempt++) {
    if (answer.kind !== "token") return { ok: false, refusal: await refusalFor(call, oauth, subject, answer) };
    try {
      return { ok: true, value: await send(withToken(target, subject, answer)) };
    } catch (error) {
      if (!(error instanceof UpstreamFailure) || error.code !== "upstream_unauthorized") throw error;
      // Refused before it was processed, so sending it again repeats nothing.
      if (attempt === 0) {
        answer = await ask(answer.version);
        continue;
      }
      return {
        ok: false,
        refusal: await refusalFor(call, oauth, subject, {
          kind: "revoked",
          reason: "the upstream refused the access token even after a refresh",
        }),
      };
    }
  }
}

async function refusalFor(
  call: CallAuthorization,
  oauth: ServiceOAuth,
  subject: GrantSubject,
  answer: Exclude<TokenAnswer, { kind: "token" }>,
): Promise<AuthorizationRefusal> {
  const details: Record<string, unknown> = { service: call.serviceSlug, mode: oauth.mode };
  if (answer.kind === "failed") return { code: answer.code, message: answer.message, details };
  if (oauth.mode === "shared") {
    if (answer.kind === "revoked") {
      // The admin is told on the service (its pending reason), and every call is refused until they authorize again.
      await markPending(call.env.DB, call.workspaceId, call.serviceId, {
        code: "invalid_grant",
        message: `The grant ended: ${answer.reason}`,
      });
      await invalidateCatalog(call.env, call.workspaceId);
    }
    return {
      code: "upstream_authorization_required",
      message: `The service ${call.serviceSlug} needs a workspace admin to authorize it again (Services → Authorize)`,
      details,
    };
  }
  const link = await callerLink(call.env, call.workspaceId, call.serviceId, oauth, subject);
  return {
    code: "upstream_authorization_required",
    message: `The service ${call.serviceSlug} needs your own authorization: open ${link.authorizationUrl} in a browser, then call again`,
    details: { ...details, ...link },
  };
}
