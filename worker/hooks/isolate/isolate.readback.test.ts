/**
 * Issue 26, finding 2, in the hook isolate: every value the host reads back from a hook is read with none of the
 * hook's code running (no `toJSON`, getter or Proxy trap), or is the hook's own data (its returned decision, its
 * publicContract), which the host validates. A hook cannot make its failure look like another one, nor make the
 * compiler see a stage or a brand its adapter does not have.
 */
import { describe, it } from "vitest";
import { beforeBundle, runBefore } from "./isolate.fixtures.ts";
import { evaluateAdapter } from "./isolate.inspect.ts";

describe("finding 2 (issue 26): the hook isolate's read-back cannot be forged", () => {
  it("Object.prototype.toJSON does not give a look-alike adapter the defineToolAdapter brand or stages", async ({ expect }) => {
    const bundle = `var __rayrun = (() => {
  Object.prototype.toJSON = function () {
    delete Object.prototype.toJSON;
    return { apiVersion: "rayrun.hooks/v1", stages: ["before", "after"], branded: true };
  };
  return { default: { apiVersion: "rayrun.hooks/v1" } };
})();`;
    expect(await evaluateAdapter({ bundle })).toEqual({
      ok: true,
      adapter: { apiVersion: "rayrun.hooks/v1", stages: [], publicContract: undefined, builtByDefineToolAdapter: false },
    });
  });

  it("a thrown value's getters and traps never run: it fails as exception, not as the engine error it claims", async ({ expect }) => {
    const getter = await runBefore(
      beforeBundle(`throw { get name() { context.log.info("the name getter ran"); return "InternalError"; }, message: "out of memory" }`),
    );
    expect(getter).toMatchObject({ outcome: "error", error: { code: "exception", message: "Error: out of memory" }, logs: [] });
    const proxy = await runBefore(
      beforeBundle(
        `throw new Proxy({}, { get(target, key) { context.log.info("trap"); return key === "name" ? "InternalError" : "stack overflow"; } })`,
      ),
    );
    expect(proxy).toMatchObject({ outcome: "error", error: { code: "exception", message: "Error: " }, logs: [] });
    // Only the host's own budget makes a timeout: a thrown look-alike of the engine's interrupt is an exception.
    const interrupted = await runBefore(beforeBundle(`throw { name: "InternalError", message: "interrupted" }`));
    expect(interrupted).toMatchObject({ outcome: "error", error: { code: "exception", message: "InternalError: interrupted" } });
    // Plain data is read as before, cut at 500 characters.
    const long = await runBefore(beforeBundle(`throw new TypeError("t".repeat(600))`));
    expect(long.error).toEqual({ code: "exception", message: `TypeError: ${"t".repeat(500)}` });
  });
});
