/**
 * Reading an upstream's answer as bytes, in few reads, and cutting the bytes
 * without copying them.
 */

/** Bytes read at most per read of an upstream answer. */
const READ_BYTES = 64 * 1024;

/**
 * An upstream answer read in reads of up to READ_BYTES. Read with a default
 * reader, a runtime stream yields one network chunk (about 4 KiB) at a time,
 * and every read is a trip through JavaScript: for a large result that trip,
 * not the bytes, is the cost. A read still returns as soon as any bytes are
 * there, so nothing waits for more. A read that fills less than half its
 * buffer is copied out and the buffer reused, so an upstream sending a trickle
 * of small writes cannot make each one hold a whole buffer. The copies are laid
 * end to end in a shared buffer, so the reads of a trickle are adjacent views
 * that `appendBytes` joins: each of an upstream's one-byte writes is one read,
 * and held one view apiece, 200,000 of them were as many objects.
 */
export class ChunkReader {
  readonly #byob: ReadableStreamBYOBReader | null;
  readonly #reader: ReadableStreamBYOBReader | ReadableStreamDefaultReader<Uint8Array>;
  #spare: ArrayBuffer | null = null;
  /** Where small reads are copied, end to end; never written over, replaced once full. */
  #pool = new Uint8Array(0);
  #poolUsed = 0;

  constructor(source: ReadableStream<Uint8Array>) {
    let byob: ReadableStreamBYOBReader | null = null;
    try {
      byob = source.getReader({ mode: "byob" });
    } catch {
      // Not a byte stream: one chunk per read, as it comes.
    }
    this.#byob = byob;
    this.#reader = byob ?? source.getReader();
  }

  /** The next bytes, or null at the end. */
  async read(): Promise<Uint8Array | null> {
    if (!this.#byob) {
      const { done, value } = await (this.#reader as ReadableStreamDefaultReader<Uint8Array>).read();
      return done ? null : value;
    }
    const { done, value } = await this.#byob.read(new Uint8Array(this.#spare ?? new ArrayBuffer(READ_BYTES)));
    this.#spare = null;
    if (done || !value) return null;
    if (value.byteLength * 2 >= READ_BYTES) return value;
    this.#spare = value.buffer as ArrayBuffer;
    if (this.#poolUsed + value.byteLength > this.#pool.byteLength) {
      this.#pool = new Uint8Array(READ_BYTES);
      this.#poolUsed = 0;
    }
    const copy = this.#pool.subarray(this.#poolUsed, this.#poolUsed + value.byteLength);
    copy.set(value);
    this.#poolUsed += value.byteLength;
    return copy;
  }

  cancel(reason: unknown): Promise<void> {
    return this.#reader.cancel(reason);
  }
}

/** The bytes `[from, to)` of the chunks laid end to end, as views into them. */
export function sliceBytes(chunks: readonly Uint8Array[], from: number, to: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let offset = 0;
  for (const chunk of chunks) {
    const start = Math.max(from - offset, 0);
    const end = Math.min(to - offset, chunk.byteLength);
    if (start < end) out.push(chunk.subarray(start, end));
    offset += chunk.byteLength;
  }
  return out;
}

/**
 * The chunks with each run of views that lie end to end in one buffer joined into one view (no copy). Cut at
 * every event, a read of many tiny events would otherwise go on as that many chunks, each a trip through the
 * streams that read it.
 */
export function adjacentJoined(chunks: readonly Uint8Array[]): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (const chunk of chunks) appendBytes(out, chunk);
  return out;
}

/** Appends `bytes` to `chunks`, as part of the last chunk when they lie right after it in one buffer. */
export function appendBytes(chunks: Uint8Array[], bytes: Uint8Array): void {
  const last = chunks.at(-1);
  if (last && last.buffer === bytes.buffer && last.byteOffset + last.byteLength === bytes.byteOffset) {
    chunks[chunks.length - 1] = new Uint8Array(last.buffer, last.byteOffset, last.byteLength + bytes.byteLength);
  } else if (bytes.byteLength) {
    chunks.push(bytes);
  }
}

/** The chunks as one array (a copy, unless there is one chunk). */
export function joinBytes(chunks: readonly Uint8Array[]): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const joined = new Uint8Array(chunks.reduce((sum, chunk) => sum + chunk.byteLength, 0));
  let offset = 0;
  for (const chunk of chunks) {
    joined.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return joined;
}
