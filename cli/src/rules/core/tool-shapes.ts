// The shapes agent SDKs give their tools, so `run.wrapTools` takes them as they are:
// a bare function, an object with `execute` (the Vercel AI SDK's `tool({ ... })`,
// Mastra) or `invoke` (LangChain), and a world toolkit's `{ impls }`. Only the call is
// wrapped; every other field stays as it was.
import type { ToolInput } from "./events.ts";

export type ToolFunction = (input: ToolInput, ...rest: unknown[]) => unknown;
/** A tool with the rules around it; its result may carry the hooks' context (`hook_context`). */
export type WrappedTool = (input?: ToolInput, ...rest: unknown[]) => Promise<unknown>;

type AnyFunction = (...args: never[]) => unknown;
/** An agent SDK's tool object: the call is its `execute` or `invoke` method. */
export interface ToolObject {
  execute?: AnyFunction;
  invoke?: AnyFunction;
}
export type ToolLike = ToolFunction | ToolObject;
export type WrappedTools<T> = { [K in keyof T]: T[K] extends ToolObject ? T[K] : WrappedTool };

/** One tool with its call wrapped: a function becomes the wrapped function, an object a copy whose `execute`/`invoke` is. */
export function wrapToolLike(name: string, tool: unknown, wrap: (fn: ToolFunction) => WrappedTool): unknown {
  if (typeof tool === "function") return wrap(tool as ToolFunction);
  const method = tool !== null && typeof tool === "object" ? callMethod(tool as ToolObject) : undefined;
  if (!method) throw new TypeError(`wrapTools: ${name} is not a function, nor an object with an execute or invoke function`);
  const original = (tool as Record<string, ToolFunction>)[method]!;
  const wrapped = wrap((input, ...rest) => original.call(tool, input, ...rest));
  // A plain object is copied; an instance keeps its class (methods, getters) through the prototype.
  const proto: unknown = Object.getPrototypeOf(tool);
  const copy = (proto === Object.prototype || proto === null ? { ...(tool as object) } : Object.create(tool as object)) as Record<
    string,
    unknown
  >;
  copy[method] = wrapped;
  return copy;
}

const callMethod = (tool: ToolObject): "execute" | "invoke" | undefined =>
  typeof tool.execute === "function" ? "execute" : typeof tool.invoke === "function" ? "invoke" : undefined;

/** A session's `toolkit()`: a `{ impls }` toolkit keeps its other fields with `impls` wrapped, a plain map is wrapped whole. */
export function wrapToolkit(toolkit: unknown, wrapTools: (tools: Record<string, ToolLike>) => unknown): unknown {
  if (toolkit === null || typeof toolkit !== "object") throw new TypeError("session.toolkit() must return a map of tools or { impls }");
  const impls = (toolkit as { impls?: unknown }).impls;
  if (impls !== null && typeof impls === "object") return { ...toolkit, impls: wrapTools(impls as Record<string, ToolLike>) };
  return wrapTools(toolkit as Record<string, ToolLike>);
}
