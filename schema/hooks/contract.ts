/**
 * The `rayrun.hooks/v1` return contract as code: the single source of truth for
 * what a hook stage may return. The isolate validates every stage result with
 * these functions, and the author declarations are generated from these constants.
 * Everything here is pure: no platform APIs, usable in the Worker, CLI and console.
 */

export const HOOK_API_VERSION = "rayrun.hooks/v1";

export const HOOK_STAGES = ["before", "after"] as const;
export type HookStage = (typeof HOOK_STAGES)[number];

export const BEFORE_ACTIONS = ["continue", "reject", "require_approval"] as const;
export const AFTER_ACTIONS = ["return", "fail"] as const;
export type BeforeAction = (typeof BEFORE_ACTIONS)[number];
export type AfterAction = (typeof AFTER_ACTIONS)[number];

/** A stable machine code: lower-case ASCII letter, then up to 63 of [a-z0-9_]. */
export const REASON_PATTERN_SOURCE = "^[a-z][a-z0-9_]{0,63}$";
export const REASON_PATTERN = new RegExp(REASON_PATTERN_SOURCE);
export const REASON_MAX_LENGTH = 64;
/** Human-readable text attached to a rejection or failure, in UTF-16 code units. */
export const MESSAGE_MIN_LENGTH = 1;
export const MESSAGE_MAX_LENGTH = 1000;

/**
 * A JSON value as it crosses the isolate boundary (copied, never shared). The
 * recursion runs through interfaces: Durable Object RPC typing maps every
 * field, and through a recursive type alias that is too deep for TypeScript.
 */
export type JsonValue = null | boolean | number | string | JsonArray | JsonObject;
export interface JsonArray extends Array<JsonValue> {}
export interface JsonObject {
  [key: string]: JsonValue;
}

export type BeforeContinue = { action: "continue"; arguments: JsonObject };
export type BeforeReject = { action: "reject"; reason: string; message: string };
/** `message`, if given, is shown to the approver beside the stable `reason`. */
export type BeforeRequireApproval = { action: "require_approval"; arguments: JsonObject; reason: string; message?: string };
export type BeforeReturn = BeforeContinue | BeforeReject | BeforeRequireApproval;

export type AfterReturnResult = { action: "return"; result: JsonValue };
export type AfterFail = { action: "fail"; reason: string; message: string };
export type AfterReturn = AfterReturnResult | AfterFail;

export type ContractCheck<T> = { ok: true; value: T } | { ok: false; message: string };

export type HookLogLevel = "debug" | "info" | "warn" | "error";
export const HOOK_LOG_LEVELS: readonly HookLogLevel[] = ["debug", "info", "warn", "error"];

/** The `context` object a stage receives inside the isolate. */
export interface HookContext<Config extends JsonObject = JsonObject> {
  /** Fixed ISO-8601 time of the call; `Date.now()` and `new Date()` return it too. */
  readonly calledAt: string;
  readonly requestId: string;
  readonly workspaceUid: string;
  readonly connectionId: string;
  readonly toolUid: string;
  /** The tool's public name, `{service}__{tool}`: the name clients call, the same in tests and live. */
  readonly toolName: string;
  /** Deep-frozen, non-secret JSON deployed with the revision. */
  readonly config: Readonly<Config>;
  readonly encoding: {
    /** UTF-8 encode then base64 (standard alphabet, padded). Throws on a lone surrogate. */
    base64Encode(value: string): string;
    /** Base64 decode then UTF-8 decode. Throws on invalid base64 or invalid UTF-8. */
    base64Decode(value: string): string;
  };
  readonly log: { readonly [L in HookLogLevel]: (message: string, data?: JsonValue) => void };
}

type Fields = Record<string, unknown>;

function isPlainObject(value: unknown): value is Fields {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function checkKeys(value: Fields, allowed: readonly string[]): string | undefined {
  const extra = Object.keys(value).filter((key) => !allowed.includes(key));
  return extra.length > 0 ? `unexpected field(s): ${extra.join(", ")}` : undefined;
}

function checkReason(value: Fields): string | undefined {
  const reason = value.reason;
  if (typeof reason !== "string") return "`reason` must be a string";
  if (!REASON_PATTERN.test(reason)) return `\`reason\` must match ${REASON_PATTERN_SOURCE}`;
  return undefined;
}

function checkMessage(value: Fields): string | undefined {
  const message = value.message;
  if (typeof message !== "string") return "`message` must be a string";
  if (message.length < MESSAGE_MIN_LENGTH || message.length > MESSAGE_MAX_LENGTH) {
    return `\`message\` must be ${MESSAGE_MIN_LENGTH}–${MESSAGE_MAX_LENGTH} characters`;
  }
  return undefined;
}

function checkArguments(value: Fields): string | undefined {
  return isPlainObject(value.arguments) ? undefined : "`arguments` must be a JSON object";
}

function firstProblem(...problems: (string | undefined)[]): string | undefined {
  return problems.find((problem) => problem !== undefined);
}

function actionOf(value: unknown, allowed: readonly string[]): { fields: Fields; action: string } | string {
  if (!isPlainObject(value)) return "the stage must return a plain object";
  const action = value.action;
  if (typeof action !== "string" || !allowed.includes(action)) {
    return `\`action\` must be one of: ${allowed.join(", ")}`;
  }
  return { fields: value, action };
}

/** Checks a `before` stage's return value. Field checks are exact: unknown fields are rejected. */
export function validateBeforeReturn(value: unknown): ContractCheck<BeforeReturn> {
  const parsed = actionOf(value, BEFORE_ACTIONS);
  if (typeof parsed === "string") return { ok: false, message: parsed };
  const { fields, action } = parsed;
  const problem =
    action === "continue"
      ? firstProblem(checkKeys(fields, ["action", "arguments"]), checkArguments(fields))
      : action === "reject"
        ? firstProblem(checkKeys(fields, ["action", "reason", "message"]), checkReason(fields), checkMessage(fields))
        : firstProblem(
            checkKeys(fields, ["action", "arguments", "reason", "message"]),
            checkArguments(fields),
            checkReason(fields),
            "message" in fields ? checkMessage(fields) : undefined,
          );
  return problem === undefined ? { ok: true, value: fields as BeforeReturn } : { ok: false, message: problem };
}

/** Checks an `after` stage's return value. `result` may be any JSON value but must be present. */
export function validateAfterReturn(value: unknown): ContractCheck<AfterReturn> {
  const parsed = actionOf(value, AFTER_ACTIONS);
  if (typeof parsed === "string") return { ok: false, message: parsed };
  const { fields, action } = parsed;
  const problem =
    action === "return"
      ? firstProblem(checkKeys(fields, ["action", "result"]), "result" in fields ? undefined : "`result` is required")
      : firstProblem(checkKeys(fields, ["action", "reason", "message"]), checkReason(fields), checkMessage(fields));
  return problem === undefined ? { ok: true, value: fields as AfterReturn } : { ok: false, message: problem };
}
