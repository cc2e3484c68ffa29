import type { Context } from "hono";
import type { AppEnv } from "../../http/app.ts";
import { ApiError, notFound } from "../../http/errors.ts";
import { findService } from "../../services/services.store.ts";
import { findTool, type ToolRecord } from "../../tools/tools.store.ts";
import { CONFIG_MAX_BYTES, isOversize, SOURCE_MAX_BYTES, type CompileFailure } from "../compiler/index.ts";
import { utf8Bytes } from "./content.ts";
import type { HookActor, JsonObject, Outcome } from "./lifecycle.types.ts";

type HookContext = Context<AppEnv>;

export function hookActor(c: HookContext): HookActor {
  const actor = c.get("actor");
  return { id: actor.id, kind: actor.kind, channel: actor.channel };
}

/** The Durable Object's refusals become the API's one error shape; success passes through. */
export function unwrap<T>(outcome: Outcome<T>): { ok: true } & T {
  if (!outcome.ok) {
    const { code, message, details, headers } = outcome;
    throw new ApiError(code, { message, details, headers });
  }
  return outcome;
}

/**
 * `unwrap` for a draft write (save, restore). A stale If-Match answers 412 with
 * the current etag only to a caller who may read the draft (`hooks:read`): the
 * etag is the current version id, and `hooks:write` alone must not learn that
 * the draft changed or what it now is, nor get a way to overwrite it unseen.
 */
export function unwrapDraftWrite<T>(c: HookContext, outcome: Outcome<T>): { ok: true } & T {
  if (!outcome.ok && outcome.code === "precondition_failed" && !c.get("actor").scopes.has("hooks:read")) {
    throw new ApiError("precondition_failed", {
      message: "The If-Match etag is not the draft's current one; reading the current etag needs the 'hooks:read' scope",
    });
  }
  return unwrap(outcome);
}

export async function requireTool(env: Env, workspaceId: string, toolUid: string): Promise<ToolRecord> {
  const tool = await findTool(env.DB, workspaceId, toolUid);
  if (!tool) throw notFound("Tool");
  return tool;
}

/**
 * A tool whose hook may change. Tools of a deleted service keep only the
 * history-only cleanup view: read, export and reset, nothing that builds or deploys.
 */
export async function requireWritableTool(env: Env, workspaceId: string, toolUid: string): Promise<ToolRecord> {
  const tool = await requireTool(env, workspaceId, toolUid);
  const service = await findService(env.DB, workspaceId, tool.serviceId);
  if (!service || service.deletedAt) {
    throw new ApiError("service_deleted", {
      message: "The tool's service was deleted; its hook history can only be listed, exported or reset",
      details: {
        serviceId: tool.serviceId,
      },
    });
  }
  return tool;
}

export function requireIfMatch(c: HookContext): string {
  const ifMatch = c.req.header("if-match");
  if (!ifMatch) {
    throw new ApiError("precondition_required", { message: "Send the draft's etag as If-Match (GET the draft to read it)" });
  }
  return ifMatch;
}

/** Checked before anything formats, hashes or stores the draft. */
export function assertDraftSizes(source: string, config: JsonObject): void {
  const sourceBytes = utf8Bytes(source);
  if (sourceBytes > SOURCE_MAX_BYTES) {
    throw new ApiError("source_too_large", {
      message: `The source is over ${SOURCE_MAX_BYTES} bytes (UTF-8)`,
      details: {
        bytes: sourceBytes,
        limitBytes: SOURCE_MAX_BYTES,
      },
    });
  }
  const configBytes = utf8Bytes(JSON.stringify(config));
  if (configBytes > CONFIG_MAX_BYTES) {
    throw new ApiError("config_too_large", {
      message: `The config is over ${CONFIG_MAX_BYTES} bytes as JSON`,
      details: {
        bytes: configBytes,
        limitBytes: CONFIG_MAX_BYTES,
      },
    });
  }
}

/** 422 `compile_failed` with the compiler's diagnostics; 413 under the size diagnostic's own code. */
export function compileError(result: CompileFailure): ApiError {
  const oversize = result.diagnostics.find(isOversize);
  if (oversize) return new ApiError(oversize.code, { message: oversize.message, details: { diagnostics: result.diagnostics } });
  const [first] = result.diagnostics;
  return new ApiError("compile_failed", {
    message: first ? `The hook does not compile: ${first.message}` : "The hook does not compile",
    details: {
      diagnostics: result.diagnostics,
    },
  });
}

/** Path cursors are decimal positions; the schema already checked the digits. */
export const cursorOf = (cursor: string | undefined) => (cursor === undefined ? undefined : Number(cursor));
