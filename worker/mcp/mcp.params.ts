import { ErrorCode } from "@modelcontextprotocol/sdk/types.js";
import { isRequestShaped } from "./mcp.body.ts";
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

const isObject = (value: unknown) => typeof value === "object" && value !== null && !Array.isArray(value);

/** The -32602 answer for a request whose params cannot name what it asks for, or null when they can. */
export function paramsRefusal(parsedBody: unknown): Response | null {
  if (!isRequestShaped(parsedBody)) return null;
  const members = TARGET_MEMBERS[parsedBody.method];
  if (!members) return null;
  const params: unknown = parsedBody.params;
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
          : null;
  if (!problem) return null;
  return jsonRpcError(200, ErrorCode.InvalidParams, `Invalid params: ${problem}`, {}, parsedBody.id);
}
