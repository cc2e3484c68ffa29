import { AsyncLocalStorage } from "node:async_hooks";
import type { RequestOptions } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type { RawResultCapture } from "./raw-result.ts";

/**
 * What one upstream request lends the fetches it makes (the SDK client calls
 * fetch inside the request's async context). The SDK reads an SSE answer in
 * the background and reports a broken stream only to `onerror`, then waits for
 * a reconnection that may never come; so a failure found in the answer's
 * bytes, such as the response bound, ends the request through `fail`.
 */
export interface RequestScope {
  fail: (error: Error) => void;
  /** Set for a tools/call whose result may pass through (upstream.passthrough.ts). */
  rawResult?: RawResultCapture;
}

const scopes = new AsyncLocalStorage<RequestScope>();

/** The scope of the upstream request the current fetch belongs to, if any. */
export const requestScope = (): RequestScope | undefined => scopes.getStore();

/** Runs `work` (one upstream request) under `scope`. */
export function withRequestScope<T>(scope: RequestScope, work: () => Promise<T>): Promise<T> {
  return scopes.run(scope, work);
}

/**
 * Runs one upstream request with a signal that a failure found in its answer
 * aborts; that failure, not the abort, is what it then throws.
 */
export async function failingFast<T>(timeout: number, send: (options: RequestOptions) => Promise<T>): Promise<T> {
  const controller = new AbortController();
  let failure: Error | null = null;
  const fail = (error: Error) => {
    failure ??= error;
    controller.abort(error);
  };
  try {
    return await withRequestScope({ fail }, () => send({ timeout, signal: controller.signal }));
  } catch (error) {
    throw failure ?? error;
  }
}
