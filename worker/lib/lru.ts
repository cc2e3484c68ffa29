/**
 * Values by key, least recently used first, at most `maxEntries` of them and `maxWeight` in all. A Worker isolate
 * serves many tenants, and what its caches hold is keyed by what they send (schemas, bundles, programs, workspaces),
 * so every such cache is one of these: a count alone would let a few large values fill the isolate's 128 MB.
 * The weight is the caller's measure of a value's memory (characters of the text it was made from).
 */
export class WeightedLru<V> {
  /** Least recently used first (a Map keeps insertion order; a hit moves its key to the end). */
  readonly #entries = new Map<string, { value: V; weight: number }>();
  #weight = 0;

  constructor(
    readonly maxEntries: number,
    readonly maxWeight: number,
  ) {}

  get size(): number {
    return this.#entries.size;
  }

  /** The sum of the weights held. */
  get weight(): number {
    return this.#weight;
  }

  /** The value, now the most recently used. */
  get(key: string): V | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    this.#entries.set(key, entry);
    return entry.value;
  }

  /** The value without counting a use. */
  peek(key: string): V | undefined {
    return this.#entries.get(key)?.value;
  }

  /**
   * Holds `value` under `key` (replacing what was there), then lets the least recently used go until both bounds
   * hold again. A value heavier than `maxWeight` on its own is not kept at all.
   */
  set(key: string, value: V, weight: number): void {
    this.delete(key);
    if (weight > this.maxWeight) return;
    this.#entries.set(key, { value, weight });
    this.#weight += weight;
    for (const [oldest, entry] of this.#entries) {
      if (this.#entries.size <= this.maxEntries && this.#weight <= this.maxWeight) break;
      this.#entries.delete(oldest);
      this.#weight -= entry.weight;
    }
  }

  delete(key: string): void {
    const entry = this.#entries.get(key);
    if (!entry) return;
    this.#entries.delete(key);
    this.#weight -= entry.weight;
  }
}
