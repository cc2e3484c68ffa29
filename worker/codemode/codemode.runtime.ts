/**
 * Trusted JavaScript evaluated in a Code Mode run's context before the
 * program's bundle. It evaluates to a function the host calls with its two
 * host functions (they stay in this closure, so the program reaches the host
 * only through `tools` and `console.log`) and returns `[start, toolError]`, an
 * array literal the host reads before any program code exists:
 *
 * - `start(program)` calls the program and returns its own promise. The host
 *   reads that promise's state from the engine, not from anything the program
 *   can reach, so it decides how the run ended.
 * - `toolError(json)` is called by the host, never by the program, to make the
 *   ToolError an inner call's promise rejects with. The host keeps each one and
 *   knows it again (by identity) if it ends the run; whatever the program does
 *   to it (or to JSON, Promise or Object.prototype), the run ends with the
 *   refusal the host sent, and only one the host sent.
 *
 * Inside, everything is the program's own: it may break these objects, but
 * only for itself. What crosses to the host is bounded by the host.
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

  async function call(name, args) {
    const json = args === undefined ? "{}" : stringify(args);
    if (typeof json !== "string") throw new TypeError("tools." + name + ": arguments must be a JSON object");
    // The host resolves with the value's JSON, or rejects with a ToolError it made with toolError.
    return parse(await hostCall(name, json));
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

  // The host's JSON always has code, message and details (null when there are none): no property is looked up on
  // a prototype the program may have planted a getter on, and defineProperty never calls a setter it planted.
  function toolError(json) {
    const info = parse(json);
    const error = new ErrorOf(info.message);
    defineProperty(error, "name", { value: "ToolError", writable: true, enumerable: false, configurable: true });
    defineProperty(error, "code", { value: info.code, writable: true, enumerable: true, configurable: true });
    if (info.details !== null) defineProperty(error, "details", { value: info.details, writable: true, enumerable: true, configurable: true });
    return error;
  }

  function start(program) {
    return program(tools, console);
  }

  return [start, toolError];
})`;
