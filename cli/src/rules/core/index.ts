// The rules engine without Node APIs: parsing, matching, the answer contract and
// merging. It runs in workerd (test/rules-core.test.ts proves it) and under Node.
export { parseRules, envNames, defaultTimeoutSeconds } from "./config.ts";
export type { HandlerSpec, HandlerType, RuleSpec, RulesConfig, RulesFormat } from "./config.ts";
export { RulesFileError, HookFailure, HookDenied, HookError } from "./errors.ts";
export type { RulesFileErrorCode, HookFailureCode } from "./errors.ts";
export { EVENTS, EVENT_ALIASES, eventNamed } from "./events.ts";
export type { EventName, HookEvent, HookAnswer, Finding, RequestShape, ResponseShape, ToolInput, Decision } from "./events.ts";
export { answerFromText, answerFromValue, attachContext } from "./answer.ts";
export { compileMatcher, splitMatcher } from "./matcher.ts";
export { DenyHandler, FunctionHandler, HttpHandler, RecordHandler, MAX_OUTPUT_BYTES } from "./handlers.ts";
export type { Handler, HandlerOptions, HookFunction, RecordSink, RecordLine } from "./handlers.ts";
export { HookRun } from "./run.ts";
export type {
  Rule,
  Verdict,
  RunSummary,
  HookRunOptions,
  Dispatched,
  ToolFunction,
  WrappedTool,
  RequestFn,
  SessionLike,
  OnOptions,
  RecordedFailure,
  AsyncAnswer,
} from "./run.ts";
export { buildRules, coreHandlerFactory } from "./build.ts";
export type { HandlerFactory, CoreFactoryOptions } from "./build.ts";
