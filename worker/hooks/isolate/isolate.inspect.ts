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

/** `unavailable`: the shared instance could not be had, so nothing was evaluated (not the bundle's doing). */
export type AdapterEvaluation = { ok: true; adapter: AdapterDescription } | { ok: false; error: IsolateError; unavailable?: true };

const STAGES = new Map<string, HookStage[]>([
  ["before,after", ["before", "after"]],
  ["before", ["before"]],
  ["after", ["after"]],
  ["", []],
]);
/** What JSON.stringify leaves out of an object: such a field reads as absent, as it did inside one. */
const NO_JSON = new Set(["undefined", "function", "symbol"]);

/**
 * The adapter's description, from the driver's `[branded, stages, apiVersion, publicContract]`. The brand and the
 * stages are primitives read straight from that array (own data of a literal the prelude built: no guest code
 * runs), so no toJSON, getter or Proxy the bundle planted can change them. apiVersion and publicContract are the
 * hook's own data, copied as JSON and checked by the compiler.
 */
function describeInSession(session: IsolateSession, bundle: string): AdapterDescription | undefined {
  const { json, calledAtMs } = inspectionContext();
  session.begin(json, calledAtMs);
  session.evaluateBundle(bundle);
  if (session.fault) return undefined;
  const source = session.newString(DESCRIBE_SOURCE);
  const description = session.callDriver("describe", [source]);
  source.dispose();
  if (!description) return undefined;
  const vm = session.vm;
  const branded = vm.getProp(description, 0);
  const stagesText = vm.getProp(description, 1);
  const apiVersion = vm.getProp(description, 2);
  const publicContract = vm.getProp(description, 3);
  description.dispose();
  try {
    const stages = vm.typeof(stagesText) === "string" ? STAGES.get(vm.getString(stagesText)) : undefined;
    if (vm.typeof(branded) !== "boolean" || !stages) {
      session.fail("invalid_return", "the adapter description could not be read");
      return undefined;
    }
    const what = "the adapter's apiVersion/publicContract";
    const copied = [apiVersion, publicContract].map((value) =>
      NO_JSON.has(vm.typeof(value)) ? { json: undefined } : session.copyJson(value, session.limits.outputBytes, what),
    );
    if (!copied[0] || !copied[1]) return undefined;
    return { apiVersion: copied[0].json, stages, publicContract: copied[1].json, builtByDefineToolAdapter: vm.sameValue(branded, vm.true) };
  } finally {
    for (const handle of [branded, stagesText, apiVersion, publicContract]) handle.dispose();
  }
}

/**
 * One bounded evaluation of a bundle's top level, for the compiler: which
 * stages exist, the apiVersion, whether defineToolAdapter built the adapter,
 * and `publicContract` copied out as plain JSON. Same limits and error codes
 * as `runStage`; never throws.
 */
export async function evaluateAdapter(request: { bundle: string; limits?: LimitOverrides }): Promise<AdapterEvaluation> {
  const session = await openSession(resolveLimits(request.limits));
  if ("unavailable" in session) return { ok: false, error: { code: "exception", message: session.message }, unavailable: true };
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
