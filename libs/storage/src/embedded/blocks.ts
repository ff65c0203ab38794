/**
 * In-memory log bytes of one shard-window, in fixed blocks carved from a few large slabs: a log is
 * a chain of blocks (`BlockLog`). A log used to be a Uint8Array of its own, reallocated as it
 * grew: at 40,000 scraped series that was one ArrayBuffer (a JS object, a C++ extension and a
 * malloc'd store) per series every few appends, the largest item of the HTTP thread's append and a
 * large share of the garbage collector's work (V8's helper threads sweep every dead buffer). Here
 * an append copies its bytes into the tail block.
 *
 * Blocks are never written again once their bytes are released: a read taken before a release (a
 * query's lazy HotLog) stays valid, as with logs kept in the file. Released blocks come back when
 * the pool goes (with its window, released whole by a flush), or when the log rewrite moves a
 * window's live logs into a fresh pool (`wasteful`).
 */

/** Bytes per block: a scrape's record is ~20 bytes; a log wastes at most the rest of its last block. */
export const BLOCK_BYTES = 64;
const BLOCK_SHIFT = 6;
/** Blocks of a slab index: a block id is `slab << SLAB_SHIFT | block in the slab`. */
const SLAB_SHIFT = 10;
const SLAB_MASK = (1 << SLAB_SHIFT) - 1;
/**
 * A pool's first slab holds 16 blocks (1 KiB), each next one twice the last, up to 1,024 (64 KiB):
 * a window of a few series (or one of many backfilled windows) costs little, a busy one few slabs.
 */
const FIRST_SLAB_BLOCKS = 16;
/** No block: the head and tail of a log that holds none, the end of a chain. */
export const NO_BLOCK = -1;
/** Released blocks a pool may hold before the log rewrite moves its live logs to a fresh one (and only once they outnumber the live ones). */
const WASTE_MIN_BLOCKS = 4096;

/** Bytes of the buffer that reads of small logs share (a view keeps it alive: reads are short-lived, a scan's or a flush's). */
const READ_BUFFER_BYTES = 256 * 1024;
/** A log longer than this is read into a buffer of its own. */
const READ_SHARED_MAX = 16 * 1024;
let readBuf = new Uint8Array(READ_BUFFER_BYTES);
let readAt = 0;

/** A log's bytes in a pool: `start` bytes of its head block are released ones; every block but the last is full. */
export interface BlockLog {
  head: number;
  tail: number;
  start: number;
  length: number;
}

export class BlockPool {
  private readonly slabs: Uint8Array[] = [];
  /** The block after each block in its chain, slab by slab. */
  private readonly links: Int32Array[] = [];
  /** Blocks handed out of the last slab so far. */
  private used = 0;
  /** Blocks handed out, and how many of them hold only released bytes. */
  private blocks = 0;
  private released = 0;

  /** Bytes held by the pool's slabs. */
  get bytes(): number {
    let n = 0;
    for (const s of this.slabs) n += s.length;
    return n;
  }

  /** Released blocks are most of the pool, and enough to be worth a copy of the live ones. */
  get wasteful(): boolean {
    return this.released >= WASTE_MIN_BLOCKS && this.released > this.blocks - this.released;
  }

  /** `data` copied to the end of `log`. */
  append(log: BlockLog, data: Uint8Array): void {
    const n = data.length;
    if (n === 0) return;
    let fill: number;
    if (log.head === NO_BLOCK) {
      log.head = log.tail = this.alloc();
      log.start = 0;
      fill = 0;
    } else fill = ((log.start + log.length - 1) & (BLOCK_BYTES - 1)) + 1;
    let slab = this.slabs[log.tail >> SLAB_SHIFT]!;
    let base = (log.tail & SLAB_MASK) << BLOCK_SHIFT;
    for (let i = 0; i < n; i++) {
      if (fill === BLOCK_BYTES) {
        const b = this.alloc();
        this.links[log.tail >> SLAB_SHIFT]![log.tail & SLAB_MASK] = b;
        log.tail = b;
        slab = this.slabs[b >> SLAB_SHIFT]!;
        base = (b & SLAB_MASK) << BLOCK_SHIFT;
        fill = 0;
      }
      // A byte at a time: records are a few bytes, where TypedArray#set's call costs more than the copy.
      slab[base + fill++] = data[i]!;
    }
    log.length += n;
  }

  /**
   * A copy of the `length` bytes from `start` in block `head` (a log's fields, as they were when
   * the read was taken: later appends and releases do not change those bytes). Small logs are
   * copied into a shared read buffer and handed out as views of it: a flush reads thousands of
   * logs, and an ArrayBuffer of its own for each cost as much as the append path's buffers did.
   */
  read(head: number, start: number, length: number): Uint8Array {
    let out: Uint8Array;
    let p: number;
    if (length > READ_SHARED_MAX) {
      out = new Uint8Array(length);
      p = 0;
    } else {
      if (readAt + length > readBuf.length) {
        readBuf = new Uint8Array(READ_BUFFER_BYTES);
        readAt = 0;
      }
      out = readBuf;
      p = readAt;
      readAt += length;
    }
    const from = p;
    let b = head;
    let off = start;
    for (let left = length; left > 0; ) {
      const slab = this.slabs[b >> SLAB_SHIFT]!;
      const at = ((b & SLAB_MASK) << BLOCK_SHIFT) + off;
      const k = Math.min(BLOCK_BYTES - off, left);
      for (let j = 0; j < k; j++) out[p + j] = slab[at + j]!;
      p += k;
      left -= k;
      off = 0;
      b = this.links[b >> SLAB_SHIFT]![b & SLAB_MASK]!;
    }
    return out === readBuf ? out.subarray(from, p) : out;
  }

  /** Release `log`'s first `n` bytes (n < its length). */
  dropHead(log: BlockLog, n: number): void {
    let off = log.start + n;
    while (off >= BLOCK_BYTES) {
      const b = log.head;
      log.head = this.links[b >> SLAB_SHIFT]![b & SLAB_MASK]!;
      this.released++;
      off -= BLOCK_BYTES;
    }
    log.start = off;
    log.length -= n;
  }

  /** Release every byte of `log`. */
  clear(log: BlockLog): void {
    if (log.head !== NO_BLOCK) this.released += (log.start + log.length + BLOCK_BYTES - 1) >> BLOCK_SHIFT;
    log.head = log.tail = NO_BLOCK;
    log.start = 0;
    log.length = 0;
  }

  private alloc(): number {
    const last = this.links.length - 1;
    if (last < 0 || this.used === this.links[last]!.length) {
      const blocks = this.slabs.length >= SLAB_SHIFT - 4 ? 1 << SLAB_SHIFT : FIRST_SLAB_BLOCKS << this.slabs.length;
      this.slabs.push(new Uint8Array(blocks << BLOCK_SHIFT));
      this.links.push(new Int32Array(blocks).fill(NO_BLOCK));
      this.used = 0;
    }
    this.blocks++;
    return ((this.links.length - 1) << SLAB_SHIFT) | this.used++;
  }
}
