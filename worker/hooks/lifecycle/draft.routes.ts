import { createRoute } from "@hono/zod-openapi";
import { errorResponses, json, jsonBody } from "../../../schema/api/common.ts";
import {
  DraftSchema,
  HookExportSchema,
  HookParams,
  IfMatchHeader,
  PageQuery,
  PutDraftBody,
  RestoreBody,
  SavedDraftSchema,
  SavedFormattedDraftSchema,
  VersionDiffSchema,
  VersionPageSchema,
  VersionParams,
  VersionSchema,
} from "../../../schema/api/hooks.ts";
import { guard } from "../../auth/guard.ts";
import { createRouter } from "../../http/app.ts";
import { notFound } from "../../http/errors.ts";
import { nowIso } from "../../lib/ids.ts";
import { formatHookSource, SOURCE_MAX_BYTES, type FormatOutcome } from "../compiler/index.ts";
import { contentHash, utf8Bytes, versionBytes } from "./content.ts";
import type { JsonObject } from "./lifecycle.types.ts";
import {
  assertDraftSizes,
  cursorOf,
  hookActor,
  requireIfMatch,
  requireTool,
  requireWritableTool,
  unwrapDraftWrite,
  unwrap,
} from "./routes.support.ts";
import { diffVersions } from "./version-diff.ts";
import { findVersion, listVersions, previousVersion, toVersionRecord, versionsAfter, type StoredVersion } from "./versions.store.ts";
import { workspaceClient } from "../../workspaces/workspace.client.ts";

export const draftRoutes = createRouter();
const HOOK = "/v1/workspaces/{ws}/tools/{toolUid}/hook";
const tags = ["hooks"];

draftRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/draft`,
    tags,
    summary: "The tool's hook draft, with its etag (also in the ETag header)",
    middleware: guard("hooks:read"),
    request: { params: HookParams },
    responses: { 200: json(DraftSchema, "The draft (empty source before the first save)"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    const draft = await workspaceClient(c.env, ws).hookDraft(toolUid);
    return c.json(draft, 200, { etag: draft.etag });
  },
);

draftRoutes.openapi(
  createRoute({
    method: "put",
    path: `${HOOK}/draft`,
    tags,
    summary: "Save the draft under If-Match; every non-identical save is a new attributed version",
    description:
      "The etag (428 `precondition_required` without If-Match, 412 `precondition_failed` when it is stale, with the current etag only for " +
      "a caller holding hooks:read) and the save quota (429 `rate_limited`) are checked before anything else. Then source that parses is formatted, " +
      "within bounds: `formatted: false` with `formatSkipped` says it was stored as sent. An identical save (same formatted " +
      "source and config) changes nothing: `created: false`, same etag, no quota used. 413 `source_too_large`/" +
      "`config_too_large`/`history_full`.",
    middleware: guard("hooks:write"),
    request: { params: HookParams, headers: IfMatchHeader, body: jsonBody(PutDraftBody) },
    responses: { 200: json(SavedFormattedDraftSchema, "Saved"), ...errorResponses(400, 404, 409, 412, 413, 428, 429) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const body = c.req.valid("json");
    const config = body.config ?? {};
    await requireWritableTool(c.env, ws, toolUid);
    const ifMatch = requireIfMatch(c);
    assertDraftSizes(body.source, config);
    const workspace = workspaceClient(c.env, ws);
    // Refusals first: a save that will be refused must not cost a Prettier run.
    unwrapDraftWrite(
      c,
      await workspace.precheckHookDraftSave({ workspaceId: ws, toolUid, ifMatch, contentHash: await contentHash(body.source, config) }),
    );
    const formatting = await formatHookSource(body.source);
    // Formatting must never make a save fail: a draft it would push over the limit is kept as written.
    const outcome: FormatOutcome =
      formatting.formatted && utf8Bytes(formatting.source) > SOURCE_MAX_BYTES
        ? { source: body.source, formatted: false, skipped: "too_large" }
        : formatting;
    const { source } = outcome;
    const note = body.note ?? null;
    const saved = unwrapDraftWrite(
      c,
      await workspace.saveHookDraft({
        workspaceId: ws,
        toolUid,
        source,
        config,
        contentHash: await contentHash(source, config),
        bytes: versionBytes(source, config, note),
        note,
        restoredFrom: null,
        ifMatch,
        actor: hookActor(c),
      }),
    );
    const formatReport = outcome.formatted ? { formatted: true } : { formatted: false, formatSkipped: outcome.skipped };
    return c.json({ etag: saved.etag, versionId: saved.versionId, created: saved.created, ...formatReport }, 200, { etag: saved.etag });
  },
);

draftRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/versions`,
    tags,
    summary: "The tool's draft versions, newest first, without their content",
    middleware: guard("hooks:read"),
    request: { params: HookParams, query: PageQuery },
    responses: { 200: json(VersionPageSchema, "One page"), ...errorResponses(400, 404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    const { limit, cursor } = c.req.valid("query");
    await requireTool(c.env, ws, toolUid);
    const page = await listVersions(c.env.DB, ws, toolUid, { limit, cursor: cursorOf(cursor) });
    return c.json({ versions: page.items, nextCursor: page.nextCursor }, 200);
  },
);

async function requireVersion(env: Env, ws: string, toolUid: string, versionId: string): Promise<StoredVersion> {
  await requireTool(env, ws, toolUid);
  const version = await findVersion(env.DB, ws, toolUid, versionId);
  if (!version) throw notFound("Version");
  return version;
}

draftRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/versions/{versionId}`,
    tags,
    summary: "One version with its source and config",
    middleware: guard("hooks:read"),
    request: { params: VersionParams },
    responses: { 200: json(VersionSchema, "The version"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid, versionId } = c.req.valid("param");
    return c.json(toVersionRecord(await requireVersion(c.env, ws, toolUid, versionId)), 200);
  },
);

const configText = (config: JsonObject | undefined) => (config ? `${JSON.stringify(config, null, 2)}\n` : "");

draftRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/versions/{versionId}/diff`,
    tags,
    summary: "Unified diffs of a version's source and config against its predecessor",
    description:
      "Versions that differ in more than 400 lines are not diffed: `tooLarge: true`, `source` and `config` null, and " +
      "`texts` carries both versions to compare elsewhere.",
    middleware: guard("hooks:read"),
    request: { params: VersionParams },
    responses: { 200: json(VersionDiffSchema, "The diff"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid, versionId } = c.req.valid("param");
    const version = await requireVersion(c.env, ws, toolUid, versionId);
    const previous = await previousVersion(c.env.DB, ws, toolUid, version.seq);
    const texts = {
      previous: { source: previous?.source ?? "", config: configText(previous?.config) },
      current: { source: version.source, config: configText(version.config) },
    };
    const previousVersionId = previous?.versionId ?? null;
    const diff = diffVersions(
      `${ws}/${toolUid}/${versionId}`,
      { from: previousVersionId ?? "empty", to: versionId },
      texts.previous,
      texts.current,
    );
    if (diff.tooLarge) {
      return c.json({ versionId, previousVersionId, tooLarge: true, source: null, config: null, texts }, 200);
    }
    const { source, config } = diff;
    return c.json({ versionId, previousVersionId, tooLarge: false, source, config }, 200);
  },
);

draftRoutes.openapi(
  createRoute({
    method: "post",
    path: `${HOOK}/versions/{versionId}/restore`,
    tags,
    summary: "Copy a version into the draft under If-Match, as a new version attributed to you",
    description: "History is never rewritten. Restoring content identical to the draft is a no-op (`created: false`).",
    middleware: guard("hooks:write"),
    request: {
      params: VersionParams,
      headers: IfMatchHeader,
      body: { required: false, content: { "application/json": { schema: RestoreBody } } },
    },
    responses: { 200: json(SavedDraftSchema, "Restored"), ...errorResponses(400, 404, 409, 412, 413, 428, 429) },
  }),
  async (c) => {
    const { ws, toolUid, versionId } = c.req.valid("param");
    await requireWritableTool(c.env, ws, toolUid);
    const version = await requireVersion(c.env, ws, toolUid, versionId);
    const ifMatch = requireIfMatch(c);
    const restoreNote = (c.req.valid("json") as { note?: string } | undefined)?.note ?? null;
    const saved = unwrapDraftWrite(
      c,
      await workspaceClient(c.env, ws).saveHookDraft({
        workspaceId: ws,
        toolUid,
        source: version.source,
        config: version.config,
        contentHash: version.contentHash,
        bytes: versionBytes(version.source, version.config, restoreNote),
        note: restoreNote,
        restoredFrom: version.versionId,
        ifMatch,
        actor: hookActor(c),
      }),
    );
    return c.json({ etag: saved.etag, versionId: saved.versionId, created: saved.created }, 200, { etag: saved.etag });
  },
);

const EXPORT_PAGE = 100;

/** The export as a stream, one page of versions at a time: a tool's history may be tens of MiB. */
function exportStream(db: D1Database, ws: string, toolUid: string): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let afterSeq = 0;
  let first = true;
  return new ReadableStream({
    start(controller) {
      controller.enqueue(encoder.encode(`{"toolUid":${JSON.stringify(toolUid)},"exportedAt":${JSON.stringify(nowIso())},"versions":[`));
    },
    async pull(controller) {
      const page = await versionsAfter(db, ws, toolUid, afterSeq, EXPORT_PAGE);
      for (const version of page) {
        controller.enqueue(encoder.encode(`${first ? "" : ","}${JSON.stringify(toVersionRecord(version))}`));
        first = false;
      }
      const last = page[page.length - 1];
      if (page.length < EXPORT_PAGE || !last) {
        controller.enqueue(encoder.encode("]}"));
        controller.close();
        return;
      }
      afterSeq = last.seq;
    },
  });
}

draftRoutes.openapi(
  createRoute({
    method: "get",
    path: `${HOOK}/export`,
    tags,
    summary: "Every version of the tool's hook, oldest first, as one JSON document",
    description: "Export before a reset to keep history the reset would remove.",
    middleware: guard("hooks:read"),
    request: { params: HookParams },
    responses: { 200: json(HookExportSchema, "The export"), ...errorResponses(404) },
  }),
  async (c) => {
    const { ws, toolUid } = c.req.valid("param");
    await requireTool(c.env, ws, toolUid);
    // Streamed, so Hono's typed JSON response cannot describe it; the schema above documents its shape.
    return c.body(exportStream(c.env.DB, ws, toolUid), 200, {
      "content-type": "application/json; charset=utf-8",
      "content-disposition": `attachment; filename="${toolUid}-hook-versions.json"`,
    }) as never;
  },
);
