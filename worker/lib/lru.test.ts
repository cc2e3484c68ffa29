import { describe, it } from "vitest";
import { WeightedLru } from "./lru.ts";

describe("WeightedLru", () => {
  const cacheOf = (entries: number, weight: number) => {
    const cache = new WeightedLru<string>(entries, weight);
    const put = (key: string, value: string) => cache.set(key, value, value.length);
    return { cache, put };
  };

  it("keeps at most its entries, dropping the least recently used", ({ expect }) => {
    const { cache, put } = cacheOf(2, 100);
    put("a", "aaaa");
    put("b", "bbbb");
    expect(cache.get("a")).toBe("aaaa");
    put("c", "cc");
    // "b" was the least recently used of the three.
    expect([cache.get("a"), cache.get("b"), cache.get("c")]).toEqual(["aaaa", undefined, "cc"]);
    expect(cache.size).toBe(2);
  });

  it("keeps at most its weight in all, and never keeps a value heavier than that alone", ({ expect }) => {
    const { cache, put } = cacheOf(10, 10);
    put("a", "aaaa");
    put("c", "cc");
    put("d", "dddddddd");
    // 14 characters: "a" (the least recently used) goes, and 10 remain.
    expect([cache.get("a"), cache.get("c"), cache.get("d")]).toEqual([undefined, "cc", "dddddddd"]);
    expect(cache.weight).toBe(10);
    put("e", "x".repeat(11));
    expect(cache.get("e")).toBeUndefined();
    expect([cache.size, cache.weight]).toEqual([2, 10]);
  });

  it("a value set again under its key replaces the old one and its weight; peek counts no use", ({ expect }) => {
    const { cache, put } = cacheOf(2, 100);
    put("a", "aaaa");
    put("b", "b");
    put("a", "a");
    expect([cache.size, cache.weight]).toEqual([2, 2]);
    // "a" was set last, so "b" is the least recently used; peeking at it does not change that.
    expect(cache.peek("b")).toBe("b");
    put("c", "c");
    expect([cache.peek("a"), cache.peek("b"), cache.peek("c")]).toEqual(["a", undefined, "c"]);
    // A value too heavy to keep also takes the old one under its key away.
    cache.set("a", "a", 101);
    expect([cache.peek("a"), cache.size, cache.weight]).toEqual([undefined, 1, 1]);
    cache.delete("c");
    expect([cache.size, cache.weight]).toEqual([0, 0]);
  });
});
