import type { HookStage } from "../../../schema/hooks/contract.ts";
import { inspectionContext } from "./isolate.context.ts";
import { resolveLimits, type LimitOverrides } from "./isolate.limits.ts";
import { DESCRIBE_SOURCE } from "./isolate.prelude.ts";
import { IsolateSession, openSession } from "./isolate.session.ts";
import type { IsolateError } from "./isolate.types.ts";

export interface AdapterDescription {
  apiVersion: unknown;
  stages: HookStage[];
  /** JSON copy of the adapter's `publicContract` (undefined when absent). */
  publicContract: unknown;
  builtByDefineToolAdapter: boolean;
}

export type AdapterEvaluation = { ok: true; adapter: AdapterDescription } | { ok: false; error: IsolateError };

type Described = { apiVersion?: unknown; stages: HookStage[]; branded: boolean; publicContract?: unknown };

function isDescribed(value: unknown): value is Described {
  if (typeof value !== "object" || value === null) return false;
  const fields = value as Record<string, unknown>;
  return (
    Array.isArray(fields.stages) &&
    fields.stages.every((stage) => stage === "before" || stage === "after") &&
    typeof fields.branded === "boolean"
  );
}

function describeInSession(session: IsolateSession, bundle: string): AdapterDescription | undefined {
  const { json, calledAtMs } = inspectionContext();
  session.begin(json, calledAtMs);
  session.evaluateBundle(bundle);
  if (session.fault) return undefined;
  const source = session.newString(DESCRIBE_SOURCE);
  const description = session.callDriver("describe", [source]);
  source.dispose();
  if (!description) return undefined;
  const copied = session.copyJson(description, session.limits.outputBytes, "the adapter's apiVersion/publicContract");
  description.dispose();
  if (!copied) return undefined;
  if (!isDescribed(copied.json)) {
    session.fail("invalid_return", "the adapter description could not be read");
    return undefined;
  }
  const { apiVersion, stages, branded, publicContract } = copied.json;
  return { apiVersion, stages, publicContract, builtByDefineToolAdapter: branded };
}

/**
 * One bounded evaluation of a bundle's top level, for the compiler: which
 * stages exist, the apiVersion, whether defineToolAdapter built the adapter,
 * and `publicContract` copied out as plain JSON. Same limits and error codes
 * as `runStage`; never throws.
 */
export async function evaluateAdapter(request: { bundle: string; limits?: LimitOverrides }): Promise<AdapterEvaluation> {
  const session = await openSession(resolveLimits(request.limits));
  if ("code" in session) return { ok: false, error: session };
  let adapter: AdapterDescription | undefined;
  try {
    adapter = describeInSession(session, request.bundle);
  } catch (error) {
    session.fail("exception", `isolate fault: ${String(error)}`);
  }
  session.close();
  const fault = session.fault;
  if (fault || !adapter) return { ok: false, error: fault ?? { code: "exception", message: "the bundle could not be evaluated" } };
  return { ok: true, adapter };
}
