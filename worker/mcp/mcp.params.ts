import {
  CompleteRequestSchema,
  ErrorCode,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  SetLevelRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { MAX_VALUE_NESTING } from "../lib/json-schema.ts";
import { isRequestShaped, methodOf } from "./mcp.body.ts";
import { jsonRpcError } from "./mcp.errors.ts";

/**
 * The members a request names its target by, checked before any SDK server
 * parses it: the SDKs answer a missing or mistyped one with an internal error
 * and a dump of their schema library's report, where the spec asks for
 * -32602 and a client deserves one line saying what is wrong.
 */
const TARGET_MEMBERS: Record<string, { key: string; arguments?: "object"; required?: string }> = {
  "tools/call": { key: "name", arguments: "object" },
  "prompts/get": { key: "name", arguments: "object" },
  "resources/read": { key: "uri" },
  "tasks/get": { key: "taskId" },
  "tasks/cancel": { key: "taskId" },
  "tasks/result": { key: "taskId" },
  // 2026-07-28's SDK lifts `inputResponses` off the params and reads any non-object as none: checked here, raw.
  "tasks/update": { key: "taskId", required: "inputResponses" },
};

/**
 * The rest of the params of the requests both revisions serve off the call path, checked with the SDK's own schema:
 * a prompt argument or a completion value that is not a string, a cursor that is a number, a completion without its
 * `argument` were answered -32603 with the schema report as the message. `_meta` is left to each revision's SDK,
 * whose envelope differs; tools/call (the hot path) has only its target members and `arguments` checked above.
 */
type ParamsSchemas = Record<string, { safeParse: (value: unknown) => { success: true } | { success: false; error: SchemaError } }>;

const PARAMS_SCHEMAS: ParamsSchemas = {
  "prompts/get": GetPromptRequestSchema,
  "completion/complete": CompleteRequestSchema,
  "tools/list": ListToolsRequestSchema,
  "prompts/list": ListPromptsRequestSchema,
  "resources/list": ListResourcesRequestSchema,
  "resources/templates/list": ListResourceTemplatesRequestSchema,
};

/**
 * Requests only the 2025-era revisions serve, checked the same way before their SDK server parses them (and answers
 * a bad level -32603, with its report): 2026-07-28 does not serve `logging/setLevel` and answers it -32601.
 */
const LEGACY_PARAMS_SCHEMAS: ParamsSchemas = {
  "logging/setLevel": SetLevelRequestSchema,
};

/** The part of a schema library's report the one line needs: each issue's path and message. */
interface SchemaError {
  issues: { path: PropertyKey[]; message: string }[];
}

/** What is wrong with a request's params by its method's schema, as one line naming the first issue; null when nothing is. */
function shapeProblem(method: string, params: unknown, schemas: ParamsSchemas = PARAMS_SCHEMAS): string | null {
  const schema = Object.hasOwn(schemas, method) ? schemas[method] : undefined;
  if (!schema) return null;
  const { _meta: _envelope, ...rest } = isObject(params) ? (params as Record<string, unknown>) : {};
  const checked = schema.safeParse({ method, ...(params === undefined ? {} : { params: isObject(params) ? rest : params }) });
  if (checked.success) return null;
  const issue = checked.error.issues[0];
  if (!issue) return `${method} has params of the wrong shape`;
  // One line: the path is where the client looks, and a report's message may span lines.
  return `${issue.path.map(String).join(".") || "params"}: ${issue.message.replaceAll("\n", " ")}`;
}

const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * The params member (other than `arguments`, which the tool's schema check refuses as `invalid_arguments`) nesting
 * objects and arrays deeper than MAX_VALUE_NESTING, or null. The SDKs' schemas recurse on a request's `_meta` (a
 * 2026-07-28 request's declared capabilities) and the relay serialises `inputResponses`: 100,000 levels overflowed
 * the stack there, answered as an internal error.
 */
function tooDeep(params: Record<string, unknown>): string | null {
  for (const [name, value] of Object.entries(params)) {
    if (name === "arguments") continue;
    // A stack, not recursion: the nesting is the client's to choose.
    const pending: [unknown, number][] = [[value, 1]];
    while (pending.length) {
      const [next, depth] = pending.pop()!;
      if (typeof next !== "object" || next === null) continue;
      if (depth > MAX_VALUE_NESTING) return name;
      for (const item of Array.isArray(next) ? next : Object.values(next)) pending.push([item, depth + 1]);
    }
  }
  return null;
}

/** The -32602 answer for a request whose params cannot name what it asks for or nest too deep, or null. */
export function paramsRefusal(parsedBody: unknown): Response | null {
  // Notifications too: a cancellation is routed to its call through a Durable Object, serialised on the way.
  const params = methodOf(parsedBody) === undefined ? undefined : (parsedBody as { params?: unknown }).params;
  const deep = isObject(params) ? tooDeep(params as Record<string, unknown>) : null;
  if (deep) {
    const message = `Invalid params: params.${deep} nests objects and arrays deeper than ${MAX_VALUE_NESTING} levels`;
    return jsonRpcError(200, ErrorCode.InvalidParams, message, {}, isRequestShaped(parsedBody) ? parsedBody.id : null);
  }
  if (!isRequestShaped(parsedBody)) return null;
  // The SDKs take a request whose progress token is neither a string nor a number for no JSON-RPC message at all, and
  // answer HTTP 400 -32700 (a parse error) although the body parsed: it is a param of the wrong type.
  const token = isObject(params) ? (params as { _meta?: unknown })._meta : undefined;
  const progressToken = isObject(token) ? (token as { progressToken?: unknown }).progressToken : undefined;
  if (progressToken !== undefined && typeof progressToken !== "string" && typeof progressToken !== "number") {
    const message = "Invalid params: params._meta.progressToken must be a string or a number";
    return jsonRpcError(200, ErrorCode.InvalidParams, message, {}, parsedBody.id);
  }
  const members = Object.hasOwn(TARGET_MEMBERS, parsedBody.method) ? TARGET_MEMBERS[parsedBody.method] : undefined;
  if (!members) {
    const shape = shapeProblem(parsedBody.method, params);
    return shape ? jsonRpcError(200, ErrorCode.InvalidParams, `Invalid params: ${shape}`, {}, parsedBody.id) : null;
  }
  const problem = !isObject(params)
    ? `${parsedBody.method} needs params, an object`
    : typeof (params as Record<string, unknown>)[members.key] !== "string"
      ? `${parsedBody.method} needs params.${members.key}, a string`
      : members.arguments &&
          (params as Record<string, unknown>).arguments !== undefined &&
          !isObject((params as Record<string, unknown>).arguments)
        ? `${parsedBody.method} takes params.arguments as an object`
        : members.required && !isObject((params as Record<string, unknown>)[members.required])
          ? `${parsedBody.method} needs params.${members.required}, an object`
          : shapeProblem(parsedBody.method, params);
  if (!problem) return null;
  return jsonRpcError(200, ErrorCode.InvalidParams, `Invalid params: ${problem}`, {}, parsedBody.id);
}

/** The -32602 answer for a 2025-era request whose params its SDK server would refuse as an internal error, or null. */
export function legacyParamsRefusal(parsedBody: unknown): Response | null {
  if (!isRequestShaped(parsedBody)) return null;
  const shape = shapeProblem(parsedBody.method, parsedBody.params, LEGACY_PARAMS_SCHEMAS);
  return shape ? jsonRpcError(200, ErrorCode.InvalidParams, `Invalid params: ${shape}`, {}, parsedBody.id) : null;
}
