import { afterResponse, type WaitUntil } from "./after-response.ts";

interface Entry<V> {
  value: V;
  /** When the read that produced `value` started: the data is at least this old. */
  readAt: number;
  refreshing: boolean;
}

/**
 * A per-isolate cache for reads on the call path (API keys, the workspace
 * catalog). An entry is served for at most `ttlMs` after its read started, so
 * how stale an answer can be stays bounded. Once an entry is past half its life,
 * the next request that uses it starts a re-read after its response; steady
 * traffic therefore never waits for the read, and only a key unused for a whole
 * TTL is read on the request path.
 */
export class RefreshAheadCache<K, V> {
  readonly #entries = new Map<K, Entry<V>>();
  /**
   * Bumped by `invalidate`, so a read that started before a write is never
   * stored after it. One counter for all keys: a write also discards reads of
   * other keys in flight, which costs only a later re-read.
   */
  #generation = 0;

  constructor(
    readonly what: string,
    readonly ttlMs: number,
    readonly maxEntries: number,
  ) {}

  async get(key: K, read: () => Promise<V>, waitUntil: WaitUntil): Promise<V> {
    const entry = this.#entries.get(key);
    const age = entry ? Date.now() - entry.readAt : Infinity;
    if (!entry || age >= this.ttlMs) return this.#read(key, read);
    if (!entry.refreshing && age >= this.ttlMs / 2) {
      afterResponse(waitUntil, `${this.what} refresh`, () =>
        this.#read(key, read).finally(() => {
          entry.refreshing = false;
        }),
      );
      entry.refreshing = true; // set once scheduled: a waitUntil that threw leaves nothing pending
    }
    return entry.value;
  }

  /** Drops one key, or every key, and discards reads still in flight. */
  invalidate(key?: K): void {
    this.#generation += 1;
    if (key === undefined) this.#entries.clear();
    else this.#entries.delete(key);
  }

  async #read(key: K, read: () => Promise<V>): Promise<V> {
    const generation = this.#generation;
    const readAt = Date.now();
    const value = await read();
    const current = this.#entries.get(key);
    // Reads of one key can overlap (a slow re-read outlives the entry); the one that began last wins.
    if (generation === this.#generation && !(current && current.readAt > readAt)) {
      if (!current && this.#entries.size >= this.maxEntries) this.#entries.clear();
      this.#entries.set(key, { value, readAt, refreshing: false });
    }
    return value;
  }
}
