import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  ErrorCode,
  McpError,
  type CallToolResult,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptRequest,
  type GetPromptResult,
  type ListPromptsRequest,
  type ListPromptsResult,
  type ListResourcesRequest,
  type ListResourcesResult,
  type ListResourceTemplatesRequest,
  type ListResourceTemplatesResult,
  type Prompt,
  type ReadResourceRequest,
  type ReadResourceResult,
  type Resource,
  type ResourceTemplate,
} from "@modelcontextprotocol/sdk/types.js";
import { GATEWAY_META_PREFIX, withoutProtocolMembers } from "../lib/gateway-meta.ts";
import { isBlocked, serviceFor, servicesWith, type ContentKind } from "../calls/content-access.ts";
import type { Catalog, CatalogService } from "../calls/catalog.ts";
import { afterResponse, type WaitUntil } from "../lib/after-response.ts";
import { newId } from "../lib/ids.ts";
import { callLogMessage, contentCallRow } from "../calls/call-rows.ts";
import type { CallRowOutcome } from "../logs/call-log.ts";
import { sendCallLogs } from "../logs/call-log.send.ts";
import { requestUpstream, UpstreamFailure, type UpstreamClient, type UpstreamTarget } from "../services/upstream.ts";
import { CallCancelled, UpstreamTimeout, type UpstreamCallOptions } from "../services/upstream.call.ts";
import { withUpstreamAuthorization } from "../upstream-auth/authorization.ts";
import { echoedName, UpstreamRpcError } from "./mcp.errors.ts";
import { gatewayUri, mapContentBlock, mapResultLinks, parseGatewayUri } from "./mcp.uris.ts";

/** Who is asking, and how to read the workspace's catalog snapshot. */
export interface ContentCaller {
  env: Env;
  workspaceId: string;
  keyId: string;
  /** `key:<key id>` or `oauth:<client_id>`, recorded on each content call row. */
  actor: string;
  grantedBy: string | null;
  profileId: string | null;
  /** Whose upstream OAuth grant the caller's requests use on services authorized per user. */
  grantSubject: string;
  loadCatalog(): Promise<Catalog>;
  waitUntil: WaitUntil;
}

/**
 * Bounds of one merged list page (resources, templates, prompts). A page stops
 * growing once it holds this many items or bytes, or after this many upstream
 * requests; the cursor then resumes where it stopped.
 */
export const LIST_PAGE_ITEMS = 100;
export const LIST_PAGE_BYTES = 1024 * 1024;
export const LIST_PAGE_UPSTREAM_REQUESTS = 10;
/** One upstream list page past either bound skips the rest of that service's list: `upstream_list_too_large`. */
export const MAX_UPSTREAM_LIST_PAGE_ITEMS = 1000;
export const MAX_UPSTREAM_LIST_PAGE_BYTES = 2 * 1024 * 1024;

/** Where a list names the services it had to leave out, with why. */
export const SKIPPED_META_KEY = `${GATEWAY_META_PREFIX}skipped`;

/**
 * A JSON-RPC error the SDK server sends with this exact code, message and data.
 * (McpError would prefix the message with "MCP error {code}:".)
 */
class GatewayRpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

/** The MCP spec's code for a resource that does not exist. */
const RESOURCE_NOT_FOUND = -32002;

const resourceNotFound = (uri: string) =>
  new GatewayRpcError(RESOURCE_NOT_FOUND, `Resource not found: ${echoedName(uri)}`, { uri: echoedName(uri) });
const unknownPrompt = (name: string) =>
  new GatewayRpcError(ErrorCode.InvalidParams, `Unknown prompt: ${echoedName(name)}`, { code: "unknown_prompt" });

/**
 * What `initialize` advertises beside tools, all served by the handlers below
 * (the SDK server answers `logging/setLevel` itself). No `subscribe` and no
 * `listChanged`: the gateway does not relay upstream list-change or resource-update notifications.
 */
export const CONTENT_CAPABILITIES = { resources: {}, prompts: {}, completions: {}, logging: {} };

/** Whether the body may hold an initialize (a body the endpoint did not parse may). */
export function isInitialize(body: { parsedBody?: unknown }): boolean {
  if (!("parsedBody" in body)) return true;
  const messages = Array.isArray(body.parsedBody) ? (body.parsedBody as unknown[]) : [body.parsedBody];
  return messages.some(
    (message) => typeof message === "object" && message !== null && (message as { method?: unknown }).method === "initialize",
  );
}

/** The requests the handlers below answer, and their results, as every revision's layer parses and sends them. */
export interface ContentMethods {
  "resources/list": [ListResourcesRequest, ListResourcesResult];
  "resources/templates/list": [ListResourceTemplatesRequest, ListResourceTemplatesResult];
  "prompts/list": [ListPromptsRequest, ListPromptsResult];
  "resources/read": [ReadResourceRequest, ReadResourceResult];
  "prompts/get": [GetPromptRequest, GetPromptResult];
  "completion/complete": [CompleteRequest, CompleteResult];
}

/**
 * What a revision's layer hands a `prompts/get` or `resources/read` whose client answers input requests: the relay
 * the upstream's requests go through (to the client's stream, or as input-required rounds), and its cancellation.
 * Empty for every other request, and for a client that answers none: the upstream's request is then refused at once.
 */
export type ContentInput = Pick<UpstreamCallOptions, "relay" | "signal">;

/** How a revision's layer installs one handler on its SDK server. */
export type OnContentRequest = <M extends keyof ContentMethods>(
  method: M,
  handler: (request: ContentMethods[M][0], input: ContentInput) => Promise<ContentMethods[M][1]>,
) => void;

/** Resources, templates, prompts and completion, each proxied to the service its name or URI belongs to. */
export function registerContentHandlers(on: OnContentRequest, caller: ContentCaller): void {
  on("resources/list", async (request) => {
    const page = await mergedList<Resource>(
      caller,
      "resources",
      request.params?.cursor,
      async (client, cursor, options) => {
        const result = await client.listResources(cursor ? { cursor } : {}, options);
        return { items: result.resources, nextCursor: result.nextCursor };
      },
      (resource, slug) => ({ ...resource, uri: gatewayUri(slug, resource.uri) }),
    );
    return { resources: page.items, ...page.rest };
  });

  on("resources/templates/list", async (request) => {
    const page = await mergedList<ResourceTemplate>(
      caller,
      "resources",
      request.params?.cursor,
      async (client, cursor, options) => {
        const result = await client.listResourceTemplates(cursor ? { cursor } : {}, options);
        return { items: result.resourceTemplates, nextCursor: result.nextCursor };
      },
      (template, slug) => ({ ...template, uriTemplate: gatewayUri(slug, template.uriTemplate) }),
    );
    return { resourceTemplates: page.items, ...page.rest };
  });

  on("prompts/list", async (request) => {
    const page = await mergedList<Prompt>(
      caller,
      "prompts",
      request.params?.cursor,
      async (client, cursor, options) => {
        const result = await client.listPrompts(cursor ? { cursor } : {}, options);
        return { items: result.prompts, nextCursor: result.nextCursor };
      },
      (prompt, slug) => ({ ...prompt, name: `${slug}__${prompt.name}` }),
    );
    return { prompts: page.items, ...page.rest };
  });

  on("resources/read", async (request, input) =>
    recorded(caller, "resources/read", request.params.uri, request.params, async (row) => {
      const uri = request.params.uri;
      const parsed = parseGatewayUri(uri);
      if (!parsed) {
        throw new GatewayRpcError(
          ErrorCode.InvalidParams,
          `Not a resource URI of this gateway: ${echoedName(uri)}; expected rayrun://{service}/{upstream URI}`,
          { code: "resource_uri_malformed" },
        );
      }
      row.item = parsed.upstreamUri;
      const catalog = await caller.loadCatalog();
      const service = allowedService(caller, catalog, parsed.slug, "resources", row);
      if (!service) throw resourceNotFound(uri);
      const result = await fromUpstream(
        caller,
        catalog,
        service,
        row,
        (client, options) => client.readResource({ uri: parsed.upstreamUri }, options),
        input,
      );
      return {
        ...withoutProtocolMembers(result),
        contents: result.contents.map((content) => ({ ...content, uri: gatewayUri(service.slug, content.uri) })),
      };
    }),
  );

  on("prompts/get", async (request, input) =>
    recorded(caller, "prompts/get", request.params.name, request.params, async (row) => {
      const name = request.params.name;
      const split = splitPublicName(name);
      if (!split) throw unknownPrompt(name);
      row.item = split.name;
      const catalog = await caller.loadCatalog();
      const service = allowedService(caller, catalog, split.slug, "prompts", row);
      if (!service) throw unknownPrompt(name);
      const result = await fromUpstream(
        caller,
        catalog,
        service,
        row,
        (client, options) =>
          client.getPrompt({ name: split.name, ...(request.params.arguments ? { arguments: request.params.arguments } : {}) }, options),
        input,
      );
      return {
        ...withoutProtocolMembers(result),
        messages: result.messages.map((message) => ({ ...message, content: mapContentBlock(message.content, service.slug) })),
      };
    }),
  );

  on("completion/complete", async (request) => {
    const catalog = await caller.loadCatalog();
    const { ref, service } = upstreamRef(catalog, caller.profileId, request.params.ref);
    const target = catalog.targets.get(service.id);
    if (!target) throw new GatewayRpcError(ErrorCode.InternalError, "The service is not available", { code: "upstream_unreachable" });
    return upstreamCall(() =>
      requestService(caller, service, target, async (client, options) => {
        // An upstream without completion support has no suggestions: that is an empty answer, not an error.
        if (!client.getServerCapabilities()?.completions) return { completion: { values: [], hasMore: false } };
        return client.complete({ ...request.params, ref }, options);
      }),
    );
  });
}

/** A tool result as the client gets it: links and embedded resources point at the gateway. */
export function withGatewayLinks(result: CallToolResult, publicToolName: string): CallToolResult {
  const split = splitPublicName(publicToolName);
  return split ? mapResultLinks(result, split.slug) : result;
}

/** `{slug}__{name}`: the first `__` splits, as for tools (slugs cannot contain `_`). */
function splitPublicName(name: string): { slug: string; name: string } | null {
  const at = name.indexOf("__");
  if (at <= 0 || at + 2 >= name.length) return null;
  return { slug: name.slice(0, at), name: name.slice(at + 2) };
}

/** The upstream's own reference for a completion, and its service; unknown and blocked look alike. */
function upstreamRef(
  catalog: Catalog,
  profileId: string | null,
  ref: CompleteRequest["params"]["ref"],
): { ref: CompleteRequest["params"]["ref"]; service: CatalogService } {
  if (ref.type === "ref/prompt") {
    const split = splitPublicName(ref.name);
    const service = split ? serviceFor(catalog, profileId, split.slug, "prompts") : null;
    if (!split || !service) throw unknownPrompt(ref.name);
    return { ref: { ...ref, name: split.name }, service };
  }
  const parsed = parseGatewayUri(ref.uri);
  const service = parsed ? serviceFor(catalog, profileId, parsed.slug, "resources") : null;
  if (!parsed || !service) {
    throw new GatewayRpcError(ErrorCode.InvalidParams, `Unknown resource template: ${echoedName(ref.uri)}`, {
      code: "unknown_resource_template",
    });
  }
  return { ref: { ...ref, uri: parsed.upstreamUri }, service };
}

/** What a content request's row learns as it goes: the upstream item, the service, the upstream's share of the time. */
interface ContentRowDraft {
  item: string;
  serviceId: string | null;
  upstreamMs: number;
}

/**
 * One resources/read or prompts/get, with its call row sent after the response whatever the outcome: `hidden` for
 * an unknown or blocked item (the client cannot tell them apart), the upstream's error or failure, `refused` for a
 * malformed URI or a service waiting for upstream authorization. Content and prompt arguments are never on the row;
 * the item is shown only to detail readers.
 */
async function recorded<T>(
  caller: ContentCaller,
  kind: "resources/read" | "prompts/get",
  name: string,
  request: unknown,
  handle: (row: ContentRowDraft) => Promise<T>,
): Promise<T> {
  const startedAt = Date.now();
  const row: ContentRowDraft = { item: name, serviceId: null, upstreamMs: 0 };
  const send = (outcome: CallRowOutcome, code: string | null, answer: unknown) => {
    const actor = {
      workspaceId: caller.workspaceId,
      actor: caller.actor,
      keyId: caller.keyId,
      grantedBy: caller.grantedBy,
      profileId: caller.profileId,
    };
    const call = contentCallRow(actor, {
      ...row,
      requestId: newId("req"),
      kind,
      name,
      startedAt,
      durationMs: Date.now() - startedAt,
      outcome,
      code,
      request,
      answer,
    });
    afterResponse(caller.waitUntil, "content log", () => sendCallLogs(caller.env, [callLogMessage(call, [], false)]));
  };
  try {
    const result = await handle(row);
    send("ok", null, result);
    return result;
  } catch (error) {
    if (error instanceof UpstreamRpcError) send("upstream_error", String(error.code), null);
    else if (error instanceof GatewayRpcError) {
      const code = typeof error.data.code === "string" ? error.data.code : null;
      // A malformed URI, or a service that waits for the caller's (or an admin's) upstream authorization: refused before the upstream.
      if (code === "resource_uri_malformed" || code === "upstream_authorization_required") send("refused", code, null);
      else if (code === "cancelled") send("cancelled", code, null);
      else if (row.upstreamMs || code?.startsWith("upstream_")) send("upstream_failed", code, null);
      else send("hidden", null, null);
    } else send("error", "internal_error", null);
    throw error;
  }
}

/** The service when the profile may use it; a blocked one is named on the row, and then looks unknown. */
function allowedService(
  caller: ContentCaller,
  catalog: Catalog,
  slug: string,
  kind: ContentKind,
  row: ContentRowDraft,
): CatalogService | null {
  const service = serviceFor(catalog, caller.profileId, slug, kind);
  row.serviceId = (service ?? isBlocked(catalog, caller.profileId, slug, kind))?.id ?? null;
  return service;
}

/** The one upstream read or get, its time counted on the row (a client answering input requests' time included). */
async function fromUpstream<T>(
  caller: ContentCaller,
  catalog: Catalog,
  service: CatalogService,
  row: ContentRowDraft,
  send: (client: UpstreamClient, options: RequestOptions) => Promise<T>,
  input: ContentInput,
): Promise<T> {
  const target = catalog.targets.get(service.id);
  if (!target) throw new GatewayRpcError(ErrorCode.InternalError, "The service is not available", { code: "upstream_unreachable" });
  const started = performance.now();
  try {
    return await upstreamCall(() => requestService(caller, service, target, send, input));
  } finally {
    row.upstreamMs = performance.now() - started;
  }
}

/** An upstream request with its failures as the client sees them: the upstream's JSON-RPC error as its own, ours with a code. */
/**
 * One request to a service's upstream, carrying the caller's upstream OAuth token where the service has OAuth
 * (the same grant a tools/call would use). Without one, the caller is told why, and per user where to authorize.
 */
async function requestService<T>(
  caller: ContentCaller,
  service: CatalogService,
  target: UpstreamTarget,
  send: (client: UpstreamClient, options: RequestOptions) => Promise<T>,
  input: ContentInput = {},
): Promise<T> {
  const call = {
    env: caller.env,
    workspaceId: caller.workspaceId,
    serviceId: service.id,
    serviceSlug: service.slug,
    oauth: service.oauth,
    callerSubject: caller.grantSubject,
  };
  const sent = await withUpstreamAuthorization(call, target, (authorized) => requestUpstream(authorized, send, input));
  if (sent.ok) return sent.value;
  throw new GatewayRpcError(ErrorCode.InternalError, sent.refusal.message, { code: sent.refusal.code, ...sent.refusal.details });
}

/** A 401 from a service without OAuth means its secret headers were refused: for the client, a protocol failure. */
const contentFailureCode = (error: UpstreamFailure) => (error.code === "upstream_unauthorized" ? "upstream_protocol_error" : error.code);

async function upstreamCall<T>(send: () => Promise<T>): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (error instanceof McpError) throw new UpstreamRpcError(error);
    if (error instanceof UpstreamFailure)
      throw new GatewayRpcError(ErrorCode.InternalError, error.message, { code: contentFailureCode(error) });
    // Only a request whose client answers input requests runs under the call's clocks and can be cancelled.
    if (error instanceof UpstreamTimeout) throw new GatewayRpcError(ErrorCode.InternalError, error.message, { code: "upstream_timeout" });
    if (error instanceof CallCancelled) throw new GatewayRpcError(ErrorCode.InternalError, error.message, { code: "cancelled" });
    throw error;
  }
}

interface ListCursor {
  /** The service to resume at (or the first after it, if it is gone). */
  s: string;
  /** That service's own cursor. */
  c?: string;
}

const encodeCursor = (cursor: ListCursor) => btoa(String.fromCharCode(...new TextEncoder().encode(JSON.stringify(cursor))));

function decodeCursor(cursor: string): ListCursor {
  try {
    const parsed = JSON.parse(new TextDecoder().decode(Uint8Array.from(atob(cursor), (char) => char.charCodeAt(0)))) as unknown;
    if (
      typeof parsed === "object" &&
      parsed !== null &&
      typeof (parsed as ListCursor).s === "string" &&
      ["string", "undefined"].includes(typeof (parsed as ListCursor).c)
    ) {
      return parsed as ListCursor;
    }
  } catch {
    // Falls through to the refusal below.
  }
  throw new GatewayRpcError(ErrorCode.InvalidParams, "Invalid cursor: pass back a nextCursor this gateway returned", {
    code: "invalid_cursor",
  });
}

/**
 * One page of a list merged over every service the profile may use for this
 * kind, in slug order. A service that fails or answers past a bound is left out
 * and named in `_meta["dev.rayrun/skipped"]`, so one broken upstream never
 * hides the others.
 */
async function mergedList<Item>(
  caller: ContentCaller,
  kind: ContentKind,
  cursor: string | undefined,
  fetchPage: (
    client: UpstreamClient,
    cursor: string | undefined,
    options: RequestOptions,
  ) => Promise<{ items: Item[]; nextCursor?: string }>,
  map: (item: Item, slug: string) => Item,
): Promise<{ items: Item[]; rest: { nextCursor?: string; _meta?: Record<string, unknown> } }> {
  const start = cursor === undefined ? undefined : decodeCursor(cursor);
  const catalog = await caller.loadCatalog();
  const services = servicesWith(catalog, caller.profileId, kind);
  let index = start ? services.findIndex((service) => service.slug >= start.s) : 0;
  if (index < 0) index = services.length;
  let upstreamCursor = start && services[index]?.slug === start.s ? start.c : undefined;
  const items: Item[] = [];
  const skipped: { service: string; code: string; message: string }[] = [];
  let bytes = 0;
  let requests = 0;
  const done = (nextCursor?: string) => ({
    items,
    rest: { ...(nextCursor ? { nextCursor } : {}), ...(skipped.length ? { _meta: { [SKIPPED_META_KEY]: skipped } } : {}) },
  });
  const nextService = () => {
    index++;
    upstreamCursor = undefined;
  };

  while (index < services.length) {
    const service = services[index]!;
    if (items.length >= LIST_PAGE_ITEMS || bytes >= LIST_PAGE_BYTES || requests >= LIST_PAGE_UPSTREAM_REQUESTS) {
      return done(encodeCursor({ s: service.slug, ...(upstreamCursor ? { c: upstreamCursor } : {}) }));
    }
    requests++;
    const target = catalog.targets.get(service.id);
    let page: { items: Item[]; nextCursor?: string };
    try {
      if (!target) throw new UpstreamFailure("upstream_unreachable", "The service is not available");
      page = await requestService(caller, service, target, (client, options) =>
        // An upstream that does not offer this kind has nothing to list.
        client.getServerCapabilities()?.[kind] ? fetchPage(client, upstreamCursor, options) : Promise.resolve({ items: [] }),
      );
    } catch (error) {
      const code =
        error instanceof UpstreamFailure
          ? contentFailureCode(error)
          : error instanceof McpError
            ? "upstream_error"
            : error instanceof GatewayRpcError
              ? String(error.data.code)
              : "upstream_protocol_error";
      skipped.push({ service: service.slug, code, message: error instanceof Error ? error.message : String(error) });
      nextService();
      continue;
    }
    const pageBytes = JSON.stringify(page.items).length;
    if (page.items.length > MAX_UPSTREAM_LIST_PAGE_ITEMS || pageBytes > MAX_UPSTREAM_LIST_PAGE_BYTES) {
      skipped.push({
        service: service.slug,
        code: "upstream_list_too_large",
        message: `One list page of the upstream is over ${MAX_UPSTREAM_LIST_PAGE_ITEMS} items or ${MAX_UPSTREAM_LIST_PAGE_BYTES} bytes`,
      });
      nextService();
      continue;
    }
    items.push(...page.items.map((item) => map(item, service.slug)));
    bytes += pageBytes;
    if (page.nextCursor) upstreamCursor = page.nextCursor;
    else nextService();
  }
  return done();
}
