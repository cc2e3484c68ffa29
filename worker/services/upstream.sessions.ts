/** What a pooled session must offer: the pool closes the ones it lets go. */
export interface Closable {
  close(): Promise<void>;
}

interface Entry<S extends Closable> {
  readonly session: S;
  readonly credential: string | undefined;
  /** Calls using the session now. */
  users: number;
  /** Out of the pool (replaced, dropped or evicted): closed once its last user is done. */
  retired: boolean;
  closed: boolean;
}

/** A session checked out for one call: `release` when done, `drop` instead when it failed and must not be reused. */
export interface HeldSession<S extends Closable> {
  readonly session: S;
  release(): void;
  drop(): void;
}

/**
 * Connected upstream sessions, reused across calls in this isolate so a call costs one upstream round trip, not an
 * initialize handshake each time. The key names the service, its URL and headers (and an OAuth grant's subject),
 * all of which tenants choose, so the pool holds at most `maxSessions`: past that the least recently used session
 * leaves the pool. A session that leaves (evicted, replaced by a newer connection for the same key, or dropped
 * after a failure) is closed once the calls using it are done, never under one: each open session holds an
 * upstream connection (its standalone SSE stream) and the SDK client's state.
 *
 * Only fully connected sessions are pooled, never a pending connection shared across requests. Two calls that
 * connect at once for the same key both keep their own; the later one replaces the earlier in the pool, and the
 * earlier is closed when its call is done instead of staying open unreferenced.
 */
export class SessionPool<S extends Closable> {
  /** Least recently used first. */
  readonly #entries = new Map<string, Entry<S>>();

  constructor(readonly maxSessions: number) {}

  /** Sessions in the pool now (retired ones still in use not counted). */
  get size(): number {
    return this.#entries.size;
  }

  /** The pooled session for `key` if it was made with `credential`, else a new one from `connect`, pooled. */
  async acquire(key: string, credential: string | undefined, connect: () => Promise<S>): Promise<HeldSession<S>> {
    const pooled = this.#entries.get(key);
    if (pooled && pooled.credential === credential) {
      this.#entries.delete(key);
      this.#entries.set(key, pooled);
      return this.#hold(key, pooled);
    }
    // A session of an older credential (a refreshed OAuth token) is not kept beside the new one.
    if (pooled) this.#retire(key, pooled);
    const entry: Entry<S> = { session: await connect(), credential, users: 0, retired: false, closed: false };
    const replaced = this.#entries.get(key);
    if (replaced) this.#retire(key, replaced);
    this.#entries.set(key, entry);
    for (const [oldest, old] of this.#entries) {
      if (this.#entries.size <= this.maxSessions) break;
      this.#retire(oldest, old);
    }
    return this.#hold(key, entry);
  }

  #hold(key: string, entry: Entry<S>): HeldSession<S> {
    entry.users++;
    let done = false;
    const finish = () => {
      if (done) return false;
      done = true;
      entry.users--;
      return true;
    };
    return {
      session: entry.session,
      release: () => {
        if (finish() && entry.retired) this.#closeIfIdle(entry);
      },
      drop: () => {
        if (!finish()) return;
        this.#retire(key, entry);
      },
    };
  }

  #retire(key: string, entry: Entry<S>): void {
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
    entry.retired = true;
    this.#closeIfIdle(entry);
  }

  #closeIfIdle(entry: Entry<S>): void {
    if (entry.users > 0 || entry.closed) return;
    entry.closed = true;
    void entry.session.close().catch(() => {});
  }
}
