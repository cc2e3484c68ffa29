import { it } from "vitest";
import { prettierPathologicalSource } from "./compiler.attacks.fixtures.ts";
import { formatHookSource } from "./compiler.format.ts";
import { RELEASE_NOTES_HOOK } from "./compiler.fixtures.ts";
import { FORMAT_MAX_BYTES } from "./compiler.limits.ts";

it("formats parseable TypeScript", async ({ expect }) => {
  const formatted = await formatHookSource(
    `export default defineToolAdapter<{q:string},unknown>({apiVersion:'rayrun.hooks/v1',before({arguments:a}){return {action:'continue',arguments:a}}})`,
  );
  expect(formatted).toEqual({
    formatted: true,
    source: `export default defineToolAdapter<{ q: string }, unknown>({
  apiVersion: "rayrun.hooks/v1",
  before({ arguments: a }) {
    return { action: "continue", arguments: a };
  },
});
`,
  });
});

it("is idempotent", async ({ expect }) => {
  const once = (await formatHookSource(RELEASE_NOTES_HOOK)).source;
  expect((await formatHookSource(once)).source).toBe(once);
});

it("returns unparseable source unchanged", async ({ expect }) => {
  const draft = "export default defineToolAdapter({\n  before({ arguments: a }) {\n    return { action: ";
  expect(await formatHookSource(draft)).toEqual({ source: draft, formatted: false, skipped: "unparsable" });
});

it("does not run Prettier on too deeply nested source", async ({ expect }) => {
  const nested = `const x = ${"[".repeat(100)}${"]".repeat(100)};`;
  expect(await formatHookSource(nested)).toEqual({ source: nested, formatted: false, skipped: "too_nested" });
  // Twelve nested last-argument arrows are formatted; Prettier's time grows about 2.3× with each one more.
  const twelve = prettierPathologicalSource(12);
  expect((await formatHookSource(twelve)).formatted).toBe(true);
  const attack = prettierPathologicalSource();
  expect(await formatHookSource(attack)).toEqual({ source: attack, formatted: false, skipped: "too_nested" });
});

it("does not run Prettier on source over 32 KiB", async ({ expect }) => {
  const line = "const a  =  1;\n";
  const over = line.repeat(Math.ceil((FORMAT_MAX_BYTES + 1) / line.length));
  expect(await formatHookSource(over)).toEqual({ source: over, formatted: false, skipped: "too_large" });
  const under = line.repeat(Math.floor(FORMAT_MAX_BYTES / line.length));
  expect(await formatHookSource(under)).toMatchObject({ formatted: true });
});
