import { it } from "vitest";
import { formatHookSource } from "./compiler.format.ts";
import { RELEASE_NOTES_HOOK } from "./compiler.fixtures.ts";

it("formats parseable TypeScript", async ({ expect }) => {
  const formatted = await formatHookSource(
    `export default defineToolAdapter<{q:string},unknown>({apiVersion:'rayrun.hooks/v1',before({arguments:a}){return {action:'continue',arguments:a}}})`,
  );
  expect(formatted).toBe(`export default defineToolAdapter<{ q: string }, unknown>({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: a }) {
    return { action: "continue", arguments: a };
  },
});
`);
});

it("is idempotent", async ({ expect }) => {
  const once = await formatHookSource(RELEASE_NOTES_HOOK);
  expect(await formatHookSource(once)).toBe(once);
});

it("returns unparseable source unchanged", async ({ expect }) => {
  const draft = "export default defineToolAdapter({\n  before({ arguments: a }) {\n    return { action: ";
  expect(await formatHookSource(draft)).toBe(draft);
});

it("returns too deeply nested and oversized source unchanged", async ({ expect }) => {
  const nested = `const x = ${"[".repeat(20_000)}${"]".repeat(20_000)};`;
  expect(await formatHookSource(nested)).toBe(nested);
  const huge = "x".repeat(200 * 1024);
  expect(await formatHookSource(huge)).toBe(huge);
});
