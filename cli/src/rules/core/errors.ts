// The errors a run raises, each with a stable code (docs/rules-file.md lists them).

/** The rules file is wrong; `path` is the key path and `line` its line in the file (when known). */
export class RulesFileError extends Error {
  override readonly name = "RulesFileError";
  constructor(
    readonly code: RulesFileErrorCode,
    message: string,
    readonly path?: string,
    readonly line?: number,
    readonly file?: string,
  ) {
    super(`${file ? `${file}:` : ""}${line === undefined ? "" : `${line}: `}${path ? `${path}: ` : ""}${message}`);
  }
}

export type RulesFileErrorCode =
  | "rules_file_unreadable"
  | "rules_file_syntax"
  | "rules_unknown_key"
  | "rules_missing_key"
  | "rules_wrong_type"
  | "rules_unknown_event"
  | "rules_unknown_handler"
  | "rules_handler_not_allowed"
  | "rules_two_alias_handlers"
  | "rules_env_not_allowed"
  | "rules_bad_matcher"
  | "rules_callable_missing"
  | "rules_handler_unavailable"
  // Declared live tools ([live], [tools.<name>], connector files, recordings).
  | "rules_bad_template"
  | "rules_bad_pattern"
  | "rules_bad_jsonpath"
  | "rules_connector_unreadable"
  | "rules_replay_unreadable"
  | "rules_replay_bad_line";

/** Why a handler failed: a hook error, recorded on the run and never silent. */
export type HookFailureCode =
  | "hook_exit"
  | "hook_timeout"
  | "hook_output_too_large"
  | "hook_malformed_answer"
  | "hook_http_status"
  | "hook_http_unreachable"
  | "hook_threw"
  /** The event itself (not a handler) was refused: its values nest deeper than MAX_EVENT_DEPTH. */
  | "event_too_deep";

export class HookFailure extends Error {
  override readonly name = "HookFailure";
  constructor(
    readonly code: HookFailureCode,
    message: string,
  ) {
    super(message);
  }
}

/** A rule refused the call; thrown to the tool's caller. */
export class HookDenied extends Error {
  override readonly name = "HookDenied";
  readonly code = "hook_denied";
  constructor(
    readonly reason: string,
    /** Set when a hook error (not a handler's decision) caused the denial. */
    readonly failure?: HookFailureCode,
  ) {
    super(`denied: ${reason}`);
  }
}

/** The rules themselves conflict at run time: two handlers of one rule rewrote the same event. */
export class HookError extends Error {
  override readonly name = "HookError";
  constructor(
    readonly code: "hook_two_rewriters",
    message: string,
  ) {
    super(message);
  }
}
