import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RefreshAheadCache } from "./refresh-ahead.ts";

const TTL = 2_000;

/** A source whose value changes on demand and that counts its reads. */
function source(initial: string) {
  let value = initial;
  let reads = 0;
  return {
    set: (next: string) => (value = next),
    get reads() {
      return reads;
    },
    read: async () => {
      reads += 1;
      return value;
    },
  };
}

describe("RefreshAheadCache", () => {
  let pending: Promise<unknown>[];
  const waitUntil = (promise: Promise<unknown>) => void pending.push(promise);
  const settle = async () => {
    await vi.advanceTimersByTimeAsync(50);
    await Promise.all(pending.splice(0));
  };

  beforeEach(() => {
    pending = [];
    vi.useFakeTimers({ toFake: ["Date", "setTimeout"] });
  });
  afterEach(() => vi.useRealTimers());

  it("serves a fresh entry without reading again", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    const data = source("v1");
    expect(await cache.get("k", data.read, waitUntil)).toBe("v1");
    data.set("v2");
    vi.advanceTimersByTime(TTL / 2 - 1);
    expect(await cache.get("k", data.read, waitUntil)).toBe("v1");
    await settle();
    expect(data.reads).toBe(1);
  });

  it("past half its life, answers from the entry and re-reads once after the response", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    const data = source("v1");
    await cache.get("k", data.read, waitUntil);
    data.set("v2");
    vi.advanceTimersByTime(TTL / 2);
    expect(await cache.get("k", data.read, waitUntil)).toBe("v1");
    expect(await cache.get("k", data.read, waitUntil)).toBe("v1");
    expect(data.reads).toBe(1); // the re-read waits until after the response
    await settle();
    expect(data.reads).toBe(2); // one re-read, however many requests saw the old entry
    expect(await cache.get("k", data.read, waitUntil)).toBe("v2");
  });

  it("never serves an entry older than the TTL: the request reads itself", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    const data = source("v1");
    await cache.get("k", data.read, waitUntil);
    data.set("v2");
    vi.advanceTimersByTime(TTL);
    expect(await cache.get("k", data.read, waitUntil)).toBe("v2");
    expect(pending).toHaveLength(0);
  });

  it("drops a re-read that started before an invalidation, so a write is never undone", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    let release!: () => void;
    let value = "before write";
    const slowRead = () => {
      const seen = value; // what storage held when the read started
      return new Promise<string>((resolve) => (release = () => resolve(seen)));
    };
    const first = cache.get("k", slowRead, waitUntil);
    release();
    await first;
    vi.advanceTimersByTime(TTL / 2);
    await cache.get("k", slowRead, waitUntil); // schedules the re-read
    await vi.advanceTimersByTimeAsync(50); // the re-read starts and waits in slowRead
    cache.invalidate("k");
    value = "after write";
    release(); // the re-read ends after the write, holding what it saw before it
    await Promise.all(pending.splice(0));
    const fresh = cache.get("k", slowRead, waitUntil);
    release();
    expect(await fresh).toBe("after write");
  });

  it("when reads of one key overlap, the one that began last is kept", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    const releases: (() => void)[] = [];
    const readSeeing = (value: string) => () => new Promise<string>((resolve) => releases.push(() => resolve(value)));
    const slow = cache.get("k", readSeeing("older"), waitUntil);
    vi.advanceTimersByTime(10);
    const fast = cache.get("k", readSeeing("newer"), waitUntil);
    releases[1]!();
    expect(await fast).toBe("newer");
    releases[0]!(); // the earlier read finishes last
    expect(await slow).toBe("older");
    expect(await cache.get("k", readSeeing("unused"), waitUntil)).toBe("newer");
  });

  it("keeps at most maxEntries keys, and invalidate() with no key drops them all", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 2);
    const data = source("v1");
    await cache.get("a", data.read, waitUntil);
    await cache.get("b", data.read, waitUntil);
    await cache.get("c", data.read, waitUntil); // over the cap: the cache starts afresh
    await cache.get("c", data.read, waitUntil);
    expect(data.reads).toBe(3);
    await cache.get("a", data.read, waitUntil);
    expect(data.reads).toBe(4);
    cache.invalidate();
    await cache.get("a", data.read, waitUntil);
    await cache.get("c", data.read, waitUntil);
    expect(data.reads).toBe(6);
  });

  it("a failed re-read keeps the entry until the TTL and is retried by a later request", async () => {
    const cache = new RefreshAheadCache<string, string>("test", TTL, 10);
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await cache.get("k", async () => "v1", waitUntil);
    vi.advanceTimersByTime(TTL / 2);
    await cache.get("k", () => Promise.reject(new Error("D1 unavailable")), waitUntil);
    await settle();
    expect(errors).toHaveBeenCalledWith("test refresh failed after the response", expect.any(Error));
    expect(await cache.get("k", async () => "v2", waitUntil)).toBe("v1");
    await settle();
    expect(await cache.get("k", async () => "v3", waitUntil)).toBe("v2");
    errors.mockRestore();
  });
});
