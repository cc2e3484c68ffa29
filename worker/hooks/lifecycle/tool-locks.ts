/**
 * Serialises the writers of one tool's hook inside the Durable Object. A
 * write awaits D1 and R2, and other requests run during those awaits; without
 * this, two saves holding the same etag could both pass the etag check.
 */
export class ToolLocks {
  readonly #tails = new Map<string, Promise<void>>();

  async run<T>(toolUid: string, work: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(toolUid) ?? Promise.resolve();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const tail = previous.then(() => held);
    this.#tails.set(toolUid, tail);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.#tails.get(toolUid) === tail) this.#tails.delete(toolUid);
    }
  }
}
