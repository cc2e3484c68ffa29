import type { ErrorCode } from "../../../schema/api/errors.ts";
import type { JsonObject } from "../../../schema/hooks/contract.ts";
import type { Channel } from "../../auth/principal.ts";

/** Config and other JSON crossing into the workspace Durable Object: JSON values, so RPC typing keeps them. */
export type { JsonObject };

/** Who made a hook change, as recorded on every version, revision and event. */
export interface HookActor {
  id: string;
  kind: "key" | "user";
  channel: Channel;
}

/**
 * A refusal from the lifecycle. The Durable Object returns these instead of
 * throwing, because an error thrown across RPC keeps only its message; the
 * route turns one into an `ApiError` with the same code, details and headers.
 */
export interface HookFailure {
  ok: false;
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown>;
  headers?: Record<string, string>;
}

export type Outcome<T> = ({ ok: true } & T) | HookFailure;

export const failure = (
  code: ErrorCode,
  message: string,
  details?: Record<string, unknown>,
  headers?: Record<string, string>,
): HookFailure => ({ ok: false, code, message, ...(details ? { details } : {}), ...(headers ? { headers } : {}) });

export type DeploymentSlot = "active" | "shadow";
