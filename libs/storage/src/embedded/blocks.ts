/**
 * In-memory log bytes of one shard-window, in fixed blocks carved from a few large slabs: a log is
 * a chain of blocks (`BlockLog`). A log used to be a Uint8Array of its own, reallocated as it
 * grew: at 40,000 scraped series that was one ArrayBuffer (a JS object, a C++ extension and a
 * malloc'd store) per series per few appends, the largest item of the HTTP thread's append and a
 * large share of the garbage collector's work (V8's helper threads sweep every dead buffer). Here
 * an append copies its bytes into the tail block, and a log released whole gives its chain back in
 * one step; the pool goes when its window does.
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

/** A log's bytes in a pool: `start` bytes of its head block are released ones; every block but the last is full. */
export interface BlockLog {
  head: number;
  tail: number;
  start: number;
  length: number;
}

export class BlockPool {
  private readonly slabs: Uint8Array[] = [];
  /** The block after each block in its chain (or in the free list), slab by slab. */
  private readonly links: Int32Array[] = [];
  private free = NO_BLOCK;
  /** Blocks handed out of the last slab so far. */
  private used = 0;

  /** Bytes held by the pool's slabs (live, free and not yet handed out). */
  get bytes(): number {
    let n = 0;
    for (const s of this.slabs) n += s.length;
    return n;
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

  /** A copy of `log`'s bytes (its blocks are reused once released, so never a view). */
  read(log: BlockLog): Uint8Array {
    const out = new Uint8Array(log.length);
    let b = log.head;
    let off = log.start;
    for (let p = 0; p < log.length; ) {
      const slab = this.slabs[b >> SLAB_SHIFT]!;
      const base = (b & SLAB_MASK) << BLOCK_SHIFT;
      const k = Math.min(BLOCK_BYTES - off, log.length - p);
      for (let j = 0; j < k; j++) out[p + j] = slab[base + off + j]!;
      p += k;
      off = 0;
      b = this.links[b >> SLAB_SHIFT]![b & SLAB_MASK]!;
    }
    return out;
  }

  /** Release `log`'s first `n` bytes (n < its length); blocks passed go back to the pool. */
  dropHead(log: BlockLog, n: number): void {
    let off = log.start + n;
    while (off >= BLOCK_BYTES) {
      const b = log.head;
      log.head = this.links[b >> SLAB_SHIFT]![b & SLAB_MASK]!;
      this.release(b, b);
      off -= BLOCK_BYTES;
    }
    log.start = off;
    log.length -= n;
  }

  /** Release every byte of `log`: its chain joins the free list whole. */
  clear(log: BlockLog): void {
    if (log.head !== NO_BLOCK) this.release(log.head, log.tail);
    log.head = log.tail = NO_BLOCK;
    log.start = 0;
    log.length = 0;
  }

  /** The chain head..tail onto the free list. */
  private release(head: number, tail: number): void {
    this.links[tail >> SLAB_SHIFT]![tail & SLAB_MASK] = this.free;
    this.free = head;
  }

  private alloc(): number {
    const f = this.free;
    if (f !== NO_BLOCK) {
      const links = this.links[f >> SLAB_SHIFT]!;
      this.free = links[f & SLAB_MASK]!;
      links[f & SLAB_MASK] = NO_BLOCK;
      return f;
    }
    const last = this.links.length - 1;
    if (last < 0 || this.used === this.links[last]!.length) {
      const blocks = this.slabs.length >= SLAB_SHIFT - 4 ? 1 << SLAB_SHIFT : FIRST_SLAB_BLOCKS << this.slabs.length;
      this.slabs.push(new Uint8Array(blocks << BLOCK_SHIFT));
      this.links.push(new Int32Array(blocks).fill(NO_BLOCK));
      this.used = 0;
    }
    return ((this.links.length - 1) << SLAB_SHIFT) | this.used++;
  }
}
