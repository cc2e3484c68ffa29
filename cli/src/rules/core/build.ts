// From a validated file to runnable rules: each handler spec built by a factory.
// The core builds what needs only fetch (deny, http); a host adds the rest.
import type { HandlerSpec, RulesConfig, RuleSpec } from "./config.ts";
import { RulesFileError } from "./errors.ts";
import type { AliasDoor } from "./alias/door.ts";
import { AliasHandler } from "./alias/handler.ts";
import { DenyHandler, HttpHandler, type Handler } from "./handlers.ts";
import type { Rule } from "./run.ts";

export type HandlerFactory = (spec: HandlerSpec, rule: RuleSpec) => Handler | Promise<Handler>;

export interface CoreFactoryOptions {
  /** Where `$VAR` header values come from (only names in the handler's allowed_env are read). */
  env?: Readonly<Record<string, string | undefined>>;
  /** The run's door, which the file's `alias` handlers apply (pass the same one to the HookRun). */
  alias?: AliasDoor;
}

/** Builds deny, http and (given the run's door) alias handlers; other types are the host's, and fail here with rules_handler_unavailable. */
export function coreHandlerFactory(options: CoreFactoryOptions = {}): HandlerFactory {
  return (spec) => {
    const common = { name: spec.name, timeout: spec.timeout, async: spec.async };
    if (spec.type === "deny") return new DenyHandler(spec.reason, common);
    if (spec.type === "http") {
      const allowed = new Set(spec.allowed_env ?? []);
      const env = Object.fromEntries(Object.entries(options.env ?? {}).filter(([name]) => allowed.has(name)));
      return new HttpHandler(spec.url, spec.headers ?? {}, env, common);
    }
    if (spec.type === "alias" && options.alias) return new AliasHandler(options.alias, { ...common, args: spec.args });
    throw unavailable(spec);
  };
}

export function unavailable(spec: HandlerSpec, why = "is not available in this runtime"): RulesFileError {
  return new RulesFileError("rules_handler_unavailable", `the ${spec.type} handler ${why}`, spec.at.path, spec.at.line);
}

export async function buildRules(config: RulesConfig, factory: HandlerFactory): Promise<Rule[]> {
  const rules: Rule[] = [];
  for (const spec of config.rules) {
    const handlers: Handler[] = [];
    for (const handler of spec.handlers) handlers.push(await factory(handler, spec));
    rules.push({ event: spec.event, matcher: spec.matcher, vendor: spec.vendor, arg: spec.arg, handlers });
  }
  return rules;
}
