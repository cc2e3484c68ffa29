import { env } from "cloudflare:test";
import { describe, it } from "vitest";
import { newTag } from "../../test/helpers.ts";
import { BundleCache, isolateBundles } from "./deployment.ts";

/** Bundles written to the real local R2 under fresh keys. */
async function bundles(...codes: string[]): Promise<string[]> {
  const tag = newTag();
  return Promise.all(
    codes.map(async (code, index) => {
      const key = `test/${tag}/${index}.js`;
      await env.BUNDLES.put(key, code);
      return key;
    }),
  );
}

describe("the isolate's bundle cache", () => {
  it("serves a bundle it holds without R2, and reads again one it let go (least recently used first)", async ({ expect }) => {
    const cache = new BundleCache(2, 1_000);
    const [a, b, c] = await bundles("export const a = 1;", "export const b = 2;", "export const c = 3;");
    expect(await cache.read(env, a!)).toBe("export const a = 1;");
    expect(await cache.read(env, b!)).toBe("export const b = 2;");
    await cache.read(env, a!);
    expect(await cache.read(env, c!)).toBe("export const c = 3;");
    expect(cache.size).toBe(2);

    // Gone from R2: what the cache still holds (a, c) reads; what it let go (b) does not.
    await env.BUNDLES.delete([a!, b!, c!]);
    expect(await cache.read(env, a!)).toBe("export const a = 1;");
    expect(await cache.read(env, c!)).toBe("export const c = 3;");
    await expect(cache.read(env, b!)).rejects.toThrow(`deployed bundle ${b} is missing from R2`);
  });

  it("holds at most its characters in all: large bundles push the oldest out", async ({ expect }) => {
    const cache = new BundleCache(100, 250);
    const keys = await bundles("a".repeat(100), "b".repeat(100), "c".repeat(100), "d".repeat(300));
    for (const key of keys.slice(0, 3)) await cache.read(env, key);
    expect([cache.size, cache.chars]).toEqual([2, 200]);
    // One bundle larger than the whole bound is served but not kept.
    expect(await cache.read(env, keys[3]!)).toHaveLength(300);
    expect([cache.size, cache.chars]).toEqual([2, 200]);
  });

  it("the gateway's cache is bounded as docs/limits.md says: 256 bundles, 16 Mi characters", ({ expect }) => {
    expect([isolateBundles.maxBundles, isolateBundles.maxChars]).toEqual([256, 16 * 1024 * 1024]);
  });
});
