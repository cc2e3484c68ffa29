// Why a declared live tool's call failed: each a stable code, recorded on the call's
// line and thrown to the caller (through post_tool_call, like any tool's exception).

export type LiveToolErrorCode =
  /** The input breaks the tool's schema (a missing required field, a wrong type); no request was made. */
  | "live_input_invalid"
  /** A variable the tool reads (listed in allowed_env) is not set; no request was made. */
  | "live_env_missing"
  /** The URL the input makes is not http(s), a hole tried to change a fixed scheme, host or path, or a redirect left them. */
  | "live_url_refused"
  | "live_http_status"
  | "live_unreachable"
  | "live_timeout"
  | "live_not_json"
  /** A JSON answer passed max_bytes: a cut JSON body cannot be read. */
  | "live_response_too_large"
  /** Replay: the recording holds no (more) answers for this tool and input. */
  | "live_replay_unrecorded";

export class LiveToolError extends Error {
  override readonly name = "LiveToolError";
  constructor(
    readonly code: LiveToolErrorCode,
    message: string,
  ) {
    super(message);
  }
}
