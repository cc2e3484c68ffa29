/**
 * Trusted JavaScript evaluated in a Code Mode run's context before the
 * program's bundle. It evaluates to a function the host calls with its two
 * host functions; they stay in this closure, so the program reaches the host
 * only through `tools` and `console.log`. It returns `start(program)`, whose
 * promise always fulfils with an envelope the host reads:
 * `{ ok: true, value }` or `{ ok: false, error }`, where `error` is a tool's
 * (`{ tool: { code, message, details? } }`, the ToolError the program did not
 * catch) or anything else thrown (`{ thrown: { name, message } }`).
 *
 * Inside, everything is the program's own: it may break these objects, but
 * only for itself, and it cannot make the run end with a tool refusal it did
 * not receive. What crosses to the host is bounded by the host.
 */
export const CODE_MODE_RUNTIME_SOURCE = String.raw`(function (hostCall, hostLine, maxLineChars) {
  "use strict";
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const StringOf = String;
  const ErrorOf = Error;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const ProxyOf = Proxy;
  // Each ToolError's refusal as the host sent it, out of the program's reach: a program may change the error it
  // caught and throw it again, but the run then ends with the refusal it received, never one it wrote.
  const refusals = new WeakMap();
  const setRefusal = WeakMap.prototype.set;
  const getRefusal = WeakMap.prototype.get;
  const hasRefusal = WeakMap.prototype.has;
  const then = Promise.prototype.then;
  const apply = Reflect.apply;

  function toolError(info, original) {
    const error = new ErrorOf(info.message);
    defineProperty(error, "name", { value: "ToolError", writable: true, enumerable: false, configurable: true });
    error.code = info.code;
    if (info.details !== undefined) error.details = info.details;
    apply(setRefusal, refusals, [error, original]);
    return error;
  }

  async function call(name, args) {
    const json = args === undefined ? "{}" : stringify(args);
    if (typeof json !== "string") throw new TypeError("tools." + name + ": arguments must be a JSON object");
    const text = await hostCall(name, json);
    const answer = parse(text);
    if (answer.ok) return answer.value;
    throw toolError(answer.error, parse(text).error);
  }

  // Any name is callable: an unknown one is refused by the host exactly like a tool the profile may not use.
  const tools = new ProxyOf(freeze({ __proto__: null }), {
    __proto__: null,
    get(target, name) {
      if (typeof name !== "string" || name === "then") return undefined;
      return function (args) { return call(name, args); };
    },
  });

  function text(value) {
    if (typeof value === "string") return value;
    try {
      const json = stringify(value);
      return typeof json === "string" ? json : StringOf(value);
    } catch (error) {
      return StringOf(value);
    }
  }

  const console = freeze({
    log(...values) {
      let line = "";
      for (let i = 0; i < values.length; i++) line += (i ? " " : "") + text(values[i]);
      if (line.length > maxLineChars) line = line.slice(0, maxLineChars) + "…";
      hostLine(line);
    },
  });

  function describe(error) {
    if (error !== null && typeof error === "object" && apply(hasRefusal, refusals, [error])) {
      return { tool: apply(getRefusal, refusals, [error]) };
    }
    try {
      const isObject = error !== null && typeof error === "object";
      const name = isObject && typeof error.name === "string" ? error.name : "Error";
      const message = isObject ? StringOf(error.message) : StringOf(error);
      return { thrown: { name, message: message.length > 1000 ? message.slice(0, 1000) + "…" : message } };
    } catch (unreadable) {
      return { thrown: { name: "Error", message: "(the thrown value could not be read)" } };
    }
  }

  // The then captured above: the program's synchronous start may replace Promise.prototype.then before it is read.
  return function start(program) {
    return apply(then, (async function () { return program(tools, console); })(), [
      (value) => ({ ok: true, value: value === undefined ? null : value }),
      (error) => ({ ok: false, error: describe(error) }),
    ]);
  };
})`;
