import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "vitest";
import { matchesOffThread } from "../src/rules/node/live/pattern-thread.ts";

const BACKTRACKS = /^(?<a>(a+)+)$/;
const HOSTILE = `${"a".repeat(40)}!`;

function timeoutAfter(ms: number): AbortSignal {
  return AbortSignal.timeout(ms);
}

describe("a regex tool's pattern off the thread", () => {
  it("answers again after a pattern was stopped at its timeout, and matches in parallel do not mix", async ({ expect }) => {
    await expect(matchesOffThread(BACKTRACKS, HOSTILE, 10, timeoutAfter(200))).rejects.toThrow();
    // The stopped thread was ended, not reused: the next match answers at once.
    const pattern = /<b>(?<word>\w+)<\/b>/g;
    const pages = ["<b>one</b><b>two</b>", "<b>three</b>", "", "<b>four</b><b>five</b><b>six</b>", "<b>seven</b>", "<b>x</b>"];
    const found = await Promise.all(pages.map((page) => matchesOffThread(pattern, page, 2, timeoutAfter(5_000))));
    expect(found).toEqual([
      [{ word: "one" }, { word: "two" }],
      [{ word: "three" }],
      [],
      [{ word: "four" }, { word: "five" }],
      [{ word: "seven" }],
      [{ word: "x" }],
    ]);
  });

  it("refuses a pattern the thread cannot run, and the thread still answers the next one", async ({ expect }) => {
    // A non-global pattern cannot be given to matchAll: the thread's error comes back as a rejection.
    await expect(matchesOffThread(/a/, "a", 1, timeoutAfter(5_000))).rejects.toThrow(/matchAll/);
    expect(await matchesOffThread(/(?<c>a)/g, "aa", 5, timeoutAfter(5_000))).toEqual([{ c: "a" }, { c: "a" }]);
  });

  it("never hands a match to an idle thread that has ended", async ({ expect }) => {
    const pattern = /(?<c>b)/g;
    expect(await matchesOffThread(pattern, "b", 1, timeoutAfter(5_000))).toEqual([{ c: "b" }]);
    // Every idle thread ends on its own (terminate, as the runtime would on a crash); the next match still answers
    // at once rather than waiting out its timeout.
    const { idleThreadsForTests } = await import("../src/rules/node/live/pattern-thread.ts");
    await Promise.all(idleThreadsForTests().map((thread) => thread.terminate()));
    expect(await matchesOffThread(pattern, "bb", 5, timeoutAfter(2_000))).toEqual([{ c: "b" }, { c: "b" }]);
  });

  it("does not keep the process alive once its matches are done", ({ expect }) => {
    const module = join(import.meta.dirname, "../src/rules/node/live/pattern-thread.ts");
    const program = `import(${JSON.stringify(module)}).then(async ({ matchesOffThread }) => {
      const found = await matchesOffThread(/(?<n>\\d)/g, "1 2", 5, AbortSignal.timeout(5000));
      console.log(JSON.stringify(found));
    });`;
    const child = spawnSync(process.execPath, ["--input-type=module", "-e", program], { encoding: "utf8", timeout: 20_000 });
    expect([child.status, child.stdout.trim(), child.signal], child.stderr).toEqual([0, '[{"n":"1"},{"n":"2"}]', null]);
  });
});
