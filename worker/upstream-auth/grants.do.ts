import { newId } from "../lib/ids.ts";
import type { UpstreamFailureCode } from "../services/upstream.ts";
import { UpstreamFailure } from "../services/upstream.ts";
import { openSecret, sealSecret } from "../services/secrets.ts";
import { parseAllowList } from "../services/url-guard.ts";
import type { OAuthServer } from "./oauth.server.ts";
import { refreshTokens, TokenRequestFailed, type GrantTokens } from "./oauth.tokens.ts";

/**
 * Upstream OAuth state in the workspace Durable Object (whose migrations create
 * the tables): authorization flows in progress, and grants with their tokens
 * sealed under SECRETS_KEY. Being the one writer per workspace, it runs at most
 * one refresh per grant at a time, however many isolates ask at once.
 */

/** How long an authorization link and its `state` stay usable. */
export const OAUTH_FLOW_TTL_MS = 10 * 60 * 1000;
/** A flow a refused call would hand out again must have at least this long left. */
const FLOW_REUSE_MIN_LEFT_MS = 2 * 60 * 1000;
/** Open flows one workspace keeps; past it the oldest is dropped (its link stops working). */
export const MAX_OPEN_FLOWS = 500;
/** An access token this close to its expiry is refreshed before it is used. */
export const REFRESH_AHEAD_MS = 60 * 1000;
/** `last_used_at` is written at most this often per grant, so calls do not each cost a write. */
const LAST_USE_RESOLUTION_MS = 60 * 1000;

/** Who a grant belongs to: `workspace` (shared mode), `user:<usr id>`, `key:<key id>` or `oauth:<client id>`. */
export type GrantSubject = string;
export const SHARED_SUBJECT: GrantSubject = "workspace";

/** `service`: an admin authorizing the service itself (it is indexed after); `caller`: one caller's own grant. */
export type FlowPurpose = "service" | "caller";

export interface NewFlow {
  flowId: string;
  state: string;
  serviceId: string;
  subject: GrantSubject;
  purpose: FlowPurpose;
  /** The actor who asked: a user or key id. */
  initiator: string;
  /** Set when the link must be opened by this signed-in user (their own grant, or the admin's). */
  initiatorUser: string | null;
  codeVerifier: string;
  authorizeUrl: string;
  /** Where the browser goes after the callback (the console that asked), if anywhere. */
  returnTo: string | null;
}

export interface ConsumedFlow {
  /** Names the flow to `saveGrant`, which saves only while the flow is still finishing (not dropped meanwhile). */
  flowId: string;
  serviceId: string;
  subject: GrantSubject;
  purpose: FlowPurpose;
  initiator: string;
  codeVerifier: string;
  returnTo: string | null;
}

export type FlowRefusal = "unknown" | "expired" | "wrong_user" | "other_browser" | "cancelled";

/** A flow whose callback used it up and is exchanging its code: who it is for, as `dropFlows` and `takeGrants` match it. */
interface FinishingFlow {
  serviceId: string;
  subject: GrantSubject;
  initiator: string;
  initiatorUser: string | null;
  consumedAt: number;
}

/**
 * How long a callback may take between using up its flow and saving its grant: its code exchange is bounded by
 * OAUTH_REQUEST_TIMEOUT_MS (10 s), so a flow still finishing after a minute is one whose callback failed.
 */
const FINISHING_FLOW_MS = 60_000;

/** What the page that asks to go on with a link bound to no user says: whose grant it makes, for what, and where. */
export interface FlowToConfirm {
  serviceId: string;
  subject: GrantSubject;
  /** The key or user id that made the link. */
  initiator: string;
  /** The origin the browser goes to next. */
  authorizationServer: string;
}

export interface GrantSummary {
  id: string;
  serviceId: string;
  subject: GrantSubject;
  mode: "shared" | "per_user";
  scopes: string[];
  expiresAt: string | null;
  authorizedBy: string;
  createdAt: string;
  refreshedAt: string | null;
  lastUsedAt: string | null;
}

/** A grant taken out of storage (disconnect, service deletion), with its tokens sealed, for revocation. */
export interface TakenGrant {
  id: string;
  serviceId: string;
  subject: GrantSubject;
  sealedTokens: string;
}

/** Why a token request could not be done now: the upstream codes a call reports. */
export type TokenFailureCode = "url_not_allowed" | "upstream_unreachable" | "upstream_protocol_error" | "upstream_response_too_large";

const tokenFailureCode = (code: UpstreamFailureCode): TokenFailureCode =>
  code === "url_not_allowed" || code === "upstream_unreachable" || code === "upstream_response_too_large"
    ? code
    : "upstream_protocol_error";

/**
 * Names one access token of one grant: the grant's id and the token's number within it. A grant deleted and
 * authorized again (perhaps as another upstream account) has a new id, so its first token is never mistaken for
 * the deleted grant's first token: not by a pooled upstream session made with the old one, nor by a 401 about it.
 */
export type TokenVersion = string;
const tokenVersion = (row: { id: string; version: number }): TokenVersion => `${row.id}.${row.version}`;

/** What the call path gets for a token: the token, or why there is none. */
export type TokenAnswer =
  | { kind: "token"; accessToken: string; version: TokenVersion }
  | { kind: "missing" }
  /** The grant was revoked or expired for good (invalid_grant, no refresh token): it is deleted. */
  | { kind: "revoked"; reason: string }
  /** A refresh could not be done now (the server unreachable, too large, refusing for another reason). */
  | { kind: "failed"; code: TokenFailureCode; message: string };

/** What a token request needs from the catalog: the server, the sealed client secret, and the rejected token version after a 401. */
export interface TokenRequest {
  serviceId: string;
  subject: GrantSubject;
  server: OAuthServer;
  sealedClientSecret: string | null;
  rejectedVersion?: TokenVersion;
}

interface FlowRow {
  flow_id: string;
  state: string;
  service_id: string;
  subject: string;
  purpose: FlowPurpose;
  initiator: string;
  initiator_user: string | null;
  code_verifier: string;
  authorize_url: string;
  return_to: string | null;
  browser_hash: string | null;
  created_at: number;
  expires_at: number;
  [key: string]: SqlStorageValue;
}

interface GrantRow {
  id: string;
  service_id: string;
  subject: string;
  mode: "shared" | "per_user";
  tokens: string;
  version: number;
  scopes: string;
  expires_at: number | null;
  authorized_by: string;
  created_at: number;
  refreshed_at: number | null;
  last_used_at: number | null;
  [key: string]: SqlStorageValue;
}

/** A time no Date can hold (a grant stored before expires_in was bounded) reads as none, rather than failing the list. */
const iso = (ms: number | null) => (ms === null || !Number.isFinite(new Date(ms).getTime()) ? null : new Date(ms).toISOString());
/** Sealed tokens open only for the grant they were sealed for. */
const tokenBinding = (serviceId: string, subject: GrantSubject) => `upstream-grant\n${serviceId}\n${subject}`;
const clientSecretBinding = (serviceId: string) => `upstream-client\n${serviceId}`;

export const sealTokens = (tokens: GrantTokens, serviceId: string, subject: GrantSubject, key: string) =>
  sealSecret(JSON.stringify(tokens), tokenBinding(serviceId, subject), key);
export const openTokens = async (sealed: string, serviceId: string, subject: GrantSubject, key: string): Promise<GrantTokens> =>
  JSON.parse(await openSecret(sealed, tokenBinding(serviceId, subject), key)) as GrantTokens;
export const sealClientSecret = (secret: string, serviceId: string, key: string) => sealSecret(secret, clientSecretBinding(serviceId), key);
export const openClientSecret = (sealed: string | null, serviceId: string, key: string) =>
  sealed ? openSecret(sealed, clientSecretBinding(serviceId), key) : Promise.resolve(null);

export class UpstreamGrantStore {
  readonly #sql: SqlStorage;
  readonly #env: Env;
  /**
   * Token version (grant id and number) → the refresh running for it: everyone asking meanwhile waits for that one.
   * Keyed by version, not grant id: a grant authorized again keeps its id, and must not join the old tokens' refresh.
   */
  readonly #refreshing = new Map<TokenVersion, Promise<TokenAnswer>>();
  /**
   * Flows used up by their callback, which is exchanging the code, by flow id. A flow dropped meanwhile (its maker's
   * key revoked, the member removed, the service's grants taken) is dropped here too, so its grant is not saved:
   * kept in memory only, as a restarted object answers the callback `cancelled`, and the user starts again.
   */
  readonly #finishing = new Map<string, FinishingFlow>();

  constructor(sql: SqlStorage, env: Env) {
    this.#sql = sql;
    this.#env = env;
  }

  /** An unstarted flow for this caller with time left, to hand out again instead of a new one on every refused call. */
  reusableFlow(serviceId: string, subject: GrantSubject): { flowId: string; expiresAt: string } | null {
    const row = this.#sql
      .exec<FlowRow>(
        "SELECT * FROM upstream_oauth_flows WHERE service_id = ? AND subject = ? AND purpose = 'caller' AND browser_hash IS NULL AND expires_at > ? LIMIT 1",
        serviceId,
        subject,
        Date.now() + FLOW_REUSE_MIN_LEFT_MS,
      )
      .toArray()[0];
    return row ? { flowId: row.flow_id, expiresAt: new Date(row.expires_at).toISOString() } : null;
  }

  /** Stores a new flow; an older one for the same service and subject stops working, and so do expired ones. */
  async createFlow(flow: NewFlow): Promise<{ expiresAt: string }> {
    const now = Date.now();
    const sealedVerifier = await sealSecret(flow.codeVerifier, `upstream-flow\n${flow.flowId}`, this.#env.SECRETS_KEY);
    this.#sql.exec(
      "DELETE FROM upstream_oauth_flows WHERE expires_at <= ? OR (service_id = ? AND subject = ?)",
      now,
      flow.serviceId,
      flow.subject,
    );
    const open = this.#sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM upstream_oauth_flows").one().n;
    if (open >= MAX_OPEN_FLOWS) {
      this.#sql.exec(
        "DELETE FROM upstream_oauth_flows WHERE flow_id IN (SELECT flow_id FROM upstream_oauth_flows ORDER BY created_at LIMIT ?)",
        open - MAX_OPEN_FLOWS + 1,
      );
    }
    const expiresAt = now + OAUTH_FLOW_TTL_MS;
    this.#sql.exec(
      `INSERT INTO upstream_oauth_flows (flow_id, state, service_id, subject, purpose, initiator, initiator_user, code_verifier,
         authorize_url, return_to, browser_hash, created_at, expires_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?)`,
      flow.flowId,
      flow.state,
      flow.serviceId,
      flow.subject,
      flow.purpose,
      flow.initiator,
      flow.initiatorUser,
      sealedVerifier,
      flow.authorizeUrl,
      flow.returnTo,
      now,
      expiresAt,
    );
    return { expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * The link is opened: the flow is bound to this browser (the hash of a cookie
   * the gateway just set), once. Only the browser that opened it can finish it.
   */
  startFlow(
    flowId: string,
    browserHash: string,
    signedInUser: string | null,
    confirmed: boolean,
  ): { ok: true; authorizeUrl: string } | { ok: true; confirm: FlowToConfirm } | { ok: false; reason: FlowRefusal } {
    const row = this.#sql.exec<FlowRow>("SELECT * FROM upstream_oauth_flows WHERE flow_id = ?", flowId).toArray()[0];
    if (!row) return { ok: false, reason: "unknown" };
    if (row.expires_at <= Date.now()) return { ok: false, reason: "expired" };
    if (row.initiator_user && row.initiator_user !== signedInUser) return { ok: false, reason: "wrong_user" };
    if (row.browser_hash && row.browser_hash !== browserHash) return { ok: false, reason: "other_browser" };
    // A link no signed-in user is bound to works in any browser: whoever opens it is shown whose grant it makes, and
    // it goes on only when they confirm on the gateway's page, so a link sent to someone else is not one click away
    // from handing their upstream account to the link's maker.
    if (!row.initiator_user && !confirmed) {
      return {
        ok: true,
        confirm: {
          serviceId: row.service_id,
          subject: row.subject,
          initiator: row.initiator,
          authorizationServer: new URL(row.authorize_url).origin,
        },
      };
    }
    this.#sql.exec("UPDATE upstream_oauth_flows SET browser_hash = ? WHERE flow_id = ?", browserHash, flowId);
    return { ok: true, authorizeUrl: row.authorize_url };
  }

  /**
   * Ends the open flows someone who lost their standing made (`initiators`: a user's or key's id, also matched as the
   * flow's signed-in user) or that would make a grant for a subject that can no longer call: a link made before would
   * otherwise still finish, and replace a grant (the workspace's shared one too) with the account of someone gone.
   */
  dropFlows(filter: { initiators: string[]; subjects: string[] }): number {
    let finishing = 0;
    for (const [flowId, flow] of this.#finishing) {
      const gone =
        filter.initiators.includes(flow.initiator) ||
        (flow.initiatorUser !== null && filter.initiators.includes(flow.initiatorUser)) ||
        filter.subjects.includes(flow.subject);
      if (gone && this.#finishing.delete(flowId)) finishing++;
    }
    const initiators = JSON.stringify(filter.initiators);
    return (
      finishing +
      this.#sql.exec(
        `DELETE FROM upstream_oauth_flows WHERE initiator IN (SELECT value FROM json_each(?))
         OR initiator_user IN (SELECT value FROM json_each(?)) OR subject IN (SELECT value FROM json_each(?))`,
        initiators,
        initiators,
        JSON.stringify(filter.subjects),
      ).rowsWritten
    );
  }

  /** The callback: the flow of this `state` is used up, whatever happens next (a state works once). */
  async consumeFlow(
    state: string,
    browserHash: string | null,
  ): Promise<{ ok: true; flow: ConsumedFlow } | { ok: false; reason: FlowRefusal }> {
    const row = this.#sql.exec<FlowRow>("DELETE FROM upstream_oauth_flows WHERE state = ? RETURNING *", state).toArray()[0];
    if (!row) return { ok: false, reason: "unknown" };
    const now = Date.now();
    if (row.expires_at <= now) return { ok: false, reason: "expired" };
    if (!row.browser_hash || row.browser_hash !== browserHash) return { ok: false, reason: "other_browser" };
    for (const [flowId, flow] of this.#finishing) if (flow.consumedAt <= now - FINISHING_FLOW_MS) this.#finishing.delete(flowId);
    this.#finishing.set(row.flow_id, {
      serviceId: row.service_id,
      subject: row.subject,
      initiator: row.initiator,
      initiatorUser: row.initiator_user,
      consumedAt: now,
    });
    const codeVerifier = await openSecret(row.code_verifier, `upstream-flow\n${row.flow_id}`, this.#env.SECRETS_KEY);
    return {
      ok: true,
      flow: {
        flowId: row.flow_id,
        serviceId: row.service_id,
        subject: row.subject,
        purpose: row.purpose,
        initiator: row.initiator,
        codeVerifier,
        returnTo: row.return_to,
      },
    };
  }

  /**
   * Stores (or replaces) the grant of one subject for one service. Answers the tokens it replaced, still sealed, so
   * the caller can revoke them where they were issued: nothing would use them again, and the account they act for
   * may not be the new one.
   */
  async saveGrant(input: {
    /** The flow the callback used up: the grant is saved only if it was not dropped while the code was exchanged. */
    flowId: string;
    serviceId: string;
    subject: GrantSubject;
    mode: "shared" | "per_user";
    tokens: GrantTokens;
    authorizedBy: string;
  }): Promise<{ saved: true; replacedTokens: string | null } | { saved: false }> {
    const sealed = await sealTokens(input.tokens, input.serviceId, input.subject, this.#env.SECRETS_KEY);
    const now = Date.now();
    // After the last await: a drop is either seen here, or comes after the grant exists and finds it.
    if (!this.#finishing.delete(input.flowId)) return { saved: false };
    // Read and replaced with no await between: no other write to the row can come in between.
    const replaced = this.#sql
      .exec<{ tokens: string }>("SELECT tokens FROM upstream_grants WHERE service_id = ? AND subject = ?", input.serviceId, input.subject)
      .toArray()[0];
    this.#sql.exec(
      `INSERT INTO upstream_grants (id, service_id, subject, mode, tokens, version, scopes, expires_at, authorized_by, created_at)
       VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?)
       ON CONFLICT (service_id, subject) DO UPDATE SET mode = excluded.mode, tokens = excluded.tokens, version = version + 1,
         scopes = excluded.scopes, expires_at = excluded.expires_at, authorized_by = excluded.authorized_by,
         created_at = excluded.created_at, refreshed_at = NULL, last_used_at = NULL`,
      newId("ugr"),
      input.serviceId,
      input.subject,
      input.mode,
      sealed,
      JSON.stringify(input.tokens.scopes),
      input.tokens.expiresAt,
      input.authorizedBy,
      now,
    );
    return { saved: true, replacedTokens: replaced?.tokens ?? null };
  }

  listGrants(serviceId?: string): GrantSummary[] {
    const rows = serviceId
      ? this.#sql.exec<GrantRow>("SELECT * FROM upstream_grants WHERE service_id = ? ORDER BY created_at", serviceId).toArray()
      : this.#sql.exec<GrantRow>("SELECT * FROM upstream_grants ORDER BY service_id, created_at").toArray();
    return rows.map((row) => ({
      id: row.id,
      serviceId: row.service_id,
      subject: row.subject,
      mode: row.mode,
      scopes: JSON.parse(row.scopes) as string[],
      expiresAt: iso(row.expires_at),
      authorizedBy: row.authorized_by,
      createdAt: iso(row.created_at)!,
      refreshedAt: iso(row.refreshed_at),
      lastUsedAt: iso(row.last_used_at),
    }));
  }

  /** Deletes grants (one, or every grant of a service) and the service's flows; returns them for revocation. */
  takeGrants(filter: { serviceId: string; grantId?: string }): TakenGrant[] {
    const rows = filter.grantId
      ? this.#sql.exec<GrantRow>(
          "DELETE FROM upstream_grants WHERE service_id = ? AND id = ? RETURNING *",
          filter.serviceId,
          filter.grantId,
        )
      : this.#sql.exec<GrantRow>("DELETE FROM upstream_grants WHERE service_id = ? RETURNING *", filter.serviceId);
    const taken = rows.toArray().map((row) => ({ id: row.id, serviceId: row.service_id, subject: row.subject, sealedTokens: row.tokens }));
    if (!filter.grantId) {
      this.#sql.exec("DELETE FROM upstream_oauth_flows WHERE service_id = ?", filter.serviceId);
      for (const [flowId, flow] of this.#finishing) if (flow.serviceId === filter.serviceId) this.#finishing.delete(flowId);
    }
    return taken;
  }

  /**
   * The access token for a call: the stored one while it has more than
   * REFRESH_AHEAD_MS left (and, after a 401, while it is not the one the
   * upstream refused), else a refreshed one. One refresh per grant runs at a
   * time; everyone asking meanwhile gets its result.
   */
  async accessToken(request: TokenRequest): Promise<TokenAnswer> {
    const row = this.#grant(request.serviceId, request.subject);
    if (!row) return { kind: "missing" };
    const now = Date.now();
    const stale =
      request.rejectedVersion !== undefined
        ? tokenVersion(row) === request.rejectedVersion
        : row.expires_at !== null && row.expires_at - now <= REFRESH_AHEAD_MS;
    if (!stale) {
      if (row.last_used_at === null || now - row.last_used_at >= LAST_USE_RESOLUTION_MS) {
        this.#sql.exec("UPDATE upstream_grants SET last_used_at = ? WHERE id = ?", now, row.id);
      }
      const tokens = await openTokens(row.tokens, row.service_id, row.subject, this.#env.SECRETS_KEY);
      return { kind: "token", accessToken: tokens.accessToken, version: tokenVersion(row) };
    }
    const version = tokenVersion(row);
    let running = this.#refreshing.get(version);
    if (!running) {
      running = this.#refresh(row, request).finally(() => this.#refreshing.delete(version));
      this.#refreshing.set(version, running);
    }
    return running;
  }

  /** After a refresh was superseded: the token of the grant as it is now (refreshed in its own turn if it must be). */
  #current(request: TokenRequest): Promise<TokenAnswer> {
    const { rejectedVersion: _superseded, ...now } = request;
    return this.accessToken(now);
  }

  #grant(serviceId: string, subject: GrantSubject): GrantRow | undefined {
    return this.#sql.exec<GrantRow>("SELECT * FROM upstream_grants WHERE service_id = ? AND subject = ?", serviceId, subject).toArray()[0];
  }

  async #refresh(row: GrantRow, request: TokenRequest): Promise<TokenAnswer> {
    const key = this.#env.SECRETS_KEY;
    const tokens = await openTokens(row.tokens, row.service_id, row.subject, key);
    const stillValid = request.rejectedVersion === undefined && row.expires_at !== null && row.expires_at > Date.now();
    const { refreshToken } = tokens;
    if (!refreshToken) {
      if (stillValid) return { kind: "token", accessToken: tokens.accessToken, version: tokenVersion(row) };
      this.#sql.exec("DELETE FROM upstream_grants WHERE id = ? AND version = ?", row.id, row.version);
      return { kind: "revoked", reason: "the access token expired and the authorization server gave no refresh token" };
    }
    try {
      const clientSecret = await openClientSecret(request.sealedClientSecret, row.service_id, key);
      const fresh = await refreshTokens(
        request.server,
        clientSecret,
        { ...tokens, refreshToken },
        parseAllowList(this.#env.DEV_ALLOWED_HOSTS),
      );
      const sealed = await sealTokens(fresh, row.service_id, row.subject, key);
      const now = Date.now();
      // Written only over the tokens it refreshed: while the token request was out (up to its 10 s), the grant may
      // have been authorized again (same id, next version, perhaps another upstream account) or deleted. Writing
      // regardless put the old account's tokens back over the new authorization, for good (round 7, finding 1).
      const written = this.#sql.exec(
        `UPDATE upstream_grants SET tokens = ?, version = version + 1, scopes = ?, expires_at = ?, refreshed_at = ?, last_used_at = ?
         WHERE id = ? AND version = ?`,
        sealed,
        JSON.stringify(fresh.scopes),
        fresh.expiresAt,
        now,
        now,
        row.id,
        row.version,
      ).rowsWritten;
      // Superseded: the callers get the grant as it is now (the new authorization's token, or none).
      if (written === 0) return this.#current(request);
      return { kind: "token", accessToken: fresh.accessToken, version: tokenVersion({ id: row.id, version: row.version + 1 }) };
    } catch (error) {
      if (error instanceof TokenRequestFailed && error.oauthError === "invalid_grant") {
        // Only the tokens the server refused: a new authorization made meanwhile is not this grant's end.
        const deleted = this.#sql.exec("DELETE FROM upstream_grants WHERE id = ? AND version = ?", row.id, row.version).rowsWritten;
        if (deleted === 0) return this.#current(request);
        return { kind: "revoked", reason: error.message };
      }
      // A grant authorized again (or deleted) while the request was out is answered as it is now, not with old tokens.
      const current = this.#grant(row.service_id, row.subject);
      if (!current || tokenVersion(current) !== tokenVersion(row)) return this.#current(request);
      // A refresh ahead of expiry that fails leaves a token that still works.
      if (stillValid) return { kind: "token", accessToken: tokens.accessToken, version: tokenVersion(row) };
      if (error instanceof UpstreamFailure) return { kind: "failed", code: tokenFailureCode(error.code), message: error.message };
      if (error instanceof TokenRequestFailed) return { kind: "failed", code: "upstream_protocol_error", message: error.message };
      throw error;
    }
  }
}
