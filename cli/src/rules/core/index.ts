// The rules engine without Node APIs: parsing, matching, the answer contract and
// merging. It runs in workerd (test/rules-core.test.ts proves it) and under Node.
export { parseRules, envNames, defaultTimeoutSeconds, aliasOptionsOf } from "./config.ts";
export type { HandlerSpec, HandlerType, RuleSpec, RulesConfig, RulesFormat } from "./config.ts";
export { RulesFileError, HookFailure, HookDenied, HookError } from "./errors.ts";
export type { RulesFileErrorCode, HookFailureCode } from "./errors.ts";
export { EVENTS, EVENT_ALIASES, eventNamed } from "./events.ts";
export type { EventName, HookEvent, HookAnswer, Finding, RequestShape, ResponseShape, ToolInput, Decision } from "./events.ts";
export { answerFromText, answerFromValue, attachContext } from "./answer.ts";
export { compileMatcher, splitMatcher, MatcherBudgetExceeded, MATCHER_STEP_BUDGET } from "./matcher.ts";
export { MAX_EVENT_DEPTH } from "./bounds.ts";
export { DenyHandler, FunctionHandler, HttpHandler, RecordHandler, MAX_OUTPUT_BYTES } from "./handlers.ts";
export type { Handler, HandlerOptions, HookFunction, RecordSink, RecordLine } from "./handlers.ts";
export { HookRun } from "./run.ts";
export type {
  Rule,
  Verdict,
  RunEnd,
  RunSummary,
  RunCounts,
  HookRunOptions,
  Dispatched,
  AgentTexts,
  ToolFunction,
  ToolLike,
  ToolObject,
  WrappedTool,
  WrappedTools,
  RequestFn,
  SessionLike,
  OnOptions,
  RecordedFailure,
  AsyncAnswer,
} from "./run.ts";
export { buildRules, coreHandlerFactory } from "./build.ts";
export { AliasDoor, MAX_ALIAS_TEXT } from "./alias/door.ts";
export type { HmacSha256 } from "./alias/derive.ts";
export type { AliasOptions, Legend, LegendEntry, LeakFinding, VariantPair } from "./alias/door.ts";
export { AliasHandler } from "./alias/handler.ts";
export type { AliasHandlerOptions } from "./alias/handler.ts";
export { AliasError, MAX_SEEDS, MAX_SEED_VALUE, KINDS as ALIAS_KINDS } from "./alias/seeds.ts";
export type { SeedEntity, AliasErrorCode } from "./alias/seeds.ts";
export type { HandlerFactory, CoreFactoryOptions } from "./build.ts";
export { LiveTools } from "./live/table.ts";
export type { BuiltTool, LiveCall, LiveExecutor, LiveRun, LiveToolsOptions } from "./live/table.ts";
export { LiveToolError } from "./live/errors.ts";
export type { LiveToolErrorCode } from "./live/errors.ts";
export { liveConfig, parseConnector, resolveConnector, DEFAULT_LIVE_TIMEOUT, DEFAULT_MAX_BYTES, MAX_LIVE_BYTES } from "./live/config.ts";
export type {
  CallableTool,
  ConnectorAuth,
  ConnectorRef,
  ConnectorSpec,
  HttpRequestSpec,
  HttpTool,
  LiveConfig,
  LiveSettings,
  ResolvedTool,
  ToolSpec,
} from "./live/config.ts";
export { ReplayBook, Redactor, isDenial, canonicalJson, MIN_REDACTED_LENGTH } from "./live/record.ts";
export type { LiveLine } from "./live/record.ts";
export { toolDefinition, InputChecker, withDefaults } from "./live/schema.ts";
export type { AnthropicToolDefinition, DefinitionShape, InputSchema, JsonSchema, OpenAiToolDefinition } from "./live/schema.ts";
export { parsePage, textPage, MAX_MATCHES, MAX_PATTERN_INPUT } from "./live/parse.ts";
export type { FieldMap, FieldSource, Page, ParseSpec, TextPage } from "./live/parse.ts";
export { fillUrl, fillJson, fillQuery, fillLimit, urlTemplate } from "./live/template.ts";
