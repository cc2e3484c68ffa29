// The `alias` handler: the door applied in the direction the event goes.
// Out (pre_*) maps alias variants back to real values and refuses what it cannot;
// in (post_*) maps real values to aliases; run_end fails the run on a real value.
import type { HookAnswer, HookEvent, RequestShape } from "../events.ts";
import type { Handler, HandlerOptions } from "../handlers.ts";
import type { AliasDoor } from "./door.ts";
import { AliasError } from "./seeds.ts";

export interface AliasHandlerOptions extends HandlerOptions {
  /** `"keep"`: on post_tool_call, leave `tool_input` as the tool got it (real values) instead of rewriting it to alias space. */
  args?: "keep" | "alias";
}

export class AliasHandler implements Handler {
  readonly type = "alias";
  readonly name: string;
  readonly async = false;
  readonly timeout?: number;
  readonly #keepArgs: boolean;

  constructor(
    readonly door: AliasDoor,
    options: AliasHandlerOptions = {},
  ) {
    this.name = options.name ?? "alias";
    this.timeout = options.timeout;
    this.#keepArgs = options.args === "keep";
  }

  async handle(event: HookEvent): Promise<HookAnswer> {
    await this.door.ready();
    try {
      switch (event.hook_event_name) {
        case "pre_tool_call":
          return this.#outTool(event);
        case "pre_request":
          return this.#outRequest(event.request);
        case "post_tool_call":
          return this.#inTool(event);
        case "post_response":
          return this.#inResponse(event);
        case "run_end":
          return this.#check(event);
      }
    } catch (error) {
      // Too much text to read: refuse rather than let an unread value through (fail closed).
      if (error instanceof AliasError)
        return { decision: "deny", reason: `${error.code}: ${error.message}`, findings: [{ check: error.code }] };
      throw error;
    }
  }

  #outTool(event: HookEvent): HookAnswer {
    const out = this.door.toReal(event.tool_input ?? {});
    if (out.refusals.length) return refuse(out.refusals);
    return out.changed ? { decision: "rewrite", updated_input: out.value } : { decision: "allow" };
  }

  #outRequest(request: RequestShape | undefined): HookAnswer {
    if (!request) return { decision: "allow" };
    const refusals: string[] = [];
    const updated: Partial<RequestShape> = {};
    // Path segments are mapped decoded (`/people/Keith%20Wexler`) and encoded again.
    const segments = request.path.split("/").map((segment) => {
      let decoded: string;
      try {
        decoded = decodeURIComponent(segment);
      } catch {
        decoded = segment;
      }
      const out = this.door.toReal(decoded);
      refusals.push(...out.refusals);
      return out.changed ? encodeURIComponent(out.value) : segment;
    });
    const path = segments.join("/");
    if (path !== request.path) updated.path = path;
    if (request.query) {
      const out = this.door.toReal(request.query);
      refusals.push(...out.refusals);
      if (out.changed) updated.query = out.value;
    }
    if (request.body !== undefined) {
      const out = this.door.toReal(request.body);
      refusals.push(...out.refusals);
      if (out.changed) updated.body = out.value;
    }
    if (refusals.length) return refuse(refusals);
    return Object.keys(updated).length ? { decision: "rewrite", updated_request: updated } : { decision: "allow" };
  }

  #inTool(event: HookEvent): HookAnswer {
    const answer: HookAnswer = { decision: "rewrite" };
    if ("tool_result" in event && event.tool_result !== undefined) {
      const result = this.door.toAlias(event.tool_result);
      if (result.changed) answer.updated_result = result.value;
    }
    if (event.error !== undefined) {
      const error = this.door.toAlias(event.error);
      if (error.changed) answer.updated_error = error.value;
    }
    // So a record handler after this rule stores alias-space arguments; not metered (the agent does not read them here).
    if (!this.#keepArgs && event.tool_input) {
      const input = this.door.toAlias(event.tool_input);
      if (input.changed) answer.updated_input = input.value;
    }
    return Object.keys(answer).length > 1 ? answer : { decision: "allow" };
  }

  #inResponse(event: HookEvent): HookAnswer {
    if (!event.response) return { decision: "allow" };
    const body = this.door.toAlias(event.response.body);
    return body.changed ? { decision: "rewrite", updated_response: body.value } : { decision: "allow" };
  }

  #check(event: HookEvent): HookAnswer {
    const { findings, total } = this.door.check(event.report, event.artifacts ?? {});
    if (total === 0) return { decision: "allow" };
    const shown = findings.reduce((sum, finding) => sum + finding.count, 0);
    const places = findings.map((finding) => `${finding.kind} at ${finding.where}`).join(", ");
    return {
      decision: "deny",
      reason: `alias check: ${total} real value(s) reached the report or artifacts (${places}${shown < total ? ", …" : ""})`,
      findings: findings.map((finding) => ({ ...finding })),
    };
  }
}

function refuse(refusals: string[]): HookAnswer {
  return { decision: "deny", reason: `alias door: ${[...new Set(refusals)].join("; ")}` };
}
