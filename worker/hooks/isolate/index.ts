export { runStage, type StageMeter, type StageRequest, type StageRun, type StageOutcome, type StageInput } from "./isolate.run.ts";
export { evaluateAdapter, type AdapterEvaluation, type AdapterDescription } from "./isolate.inspect.ts";
export { DEFAULT_LIMITS, resolveLimits, type IsolateLimits, type LimitOverrides } from "./isolate.limits.ts";
export {
  ISOLATE_ERROR_CODES,
  type HookLog,
  type IsolateError,
  type IsolateErrorCode,
  type IsolateUsage,
  type StageContextInput,
} from "./isolate.types.ts";
