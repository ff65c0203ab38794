import { grown, type SeriesKey } from '@s4/core';
import { BlockPool, NO_BLOCK, type BlockLog } from './blocks.js';

/**
 * The embedded hot tier's per-series and per-log state as rows of typed arrays, not an object
 * per series and per log. At a million active series the HTTP thread's major GCs took seconds
 * (issue 12): their mark time grows with the number of live objects, and the hot tier held four
 * per series (its Series, a Log per window, the append path's KeyAppends and its Buffer) plus a
 * WeakMap entry (an ephemeron, dearer still to mark). A typed array is one object however many
 * rows it holds, and a Map of small integers holds no object per entry.
 */

/**
 * A log's bytes in the log file: `at[2i]` the offset of piece i, `at[2i + 1]` its length, in the
 * log's order. The file already holds every appended byte; keeping a copy in process memory as
 * well made the hot tier of a records load hundreds of MB of the process (the page cache holds
 * what is read back, and the kernel can drop it).
 */
export interface Spans {
  at: Float64Array;
  n: number;
}

/** No row, no handle. */
export const NONE = -1;

/** The fields of one row as BlockPool takes them: loaded from the row, then stored back (no object per log). */
const cursor: BlockLog = { head: NO_BLOCK, tail: NO_BLOCK, start: 0, length: 0 };

/**
 * Every series with a log in some window, by handle (a small integer, reused once the series has
 * no log left): its id, key, how many logs point at it, where its last append went (the append
 * path's shortcut to that log), and its appends' series part as logged (walSeriesBytes) in a
 * shared arena. The id and key are the write path's own objects (its caches hand the same ones
 * on every request), so the table adds no object of its own per series.
 */
export class SeriesTable {
  private readonly byId = new Map<string, number>();
  private ids: string[] = [];
  private keys: (SeriesKey | null)[] = [];
  /** Logs (one per window) of each handle; the handle goes when the last is released. */
  private logs = new Int32Array(1024);
  /** The shard (ShardState.index), window (hours since the epoch, or -1) and row of the handle's last append. */
  lastShard = new Int32Array(1024);
  lastHour = new Int32Array(1024);
  lastRow = new Int32Array(1024);
  /** Each handle's logged series part: `walLen` bytes at `walAt` in `wal` (0: not made yet). */
  private wal = new Uint8Array(64 * 1024);
  private walUsed = 0;
  /** Arena bytes of handles since let go (copied away once they are most of it). */
  private walDead = 0;
  private walAt = new Int32Array(1024);
  private walLen = new Int32Array(1024);
  private readonly free: number[] = [];
  /**
   * Per tag key and value, the handles given to series with that pair: a query of one host at
   * 1 M series tested the key of every series of its metric (75,000, ~80 ms of the HTTP thread a
   * query) where a few hold the pair. Lists are kept as made: a handle let go or reused since
   * stays until the list is swept (when it has doubled since the last sweep), so readers check
   * each handle's key (withTag).
   */
  private readonly postings = new Map<string, Map<string, Postings>>();
  /** Per handle, the last nextStamp() a pass met it with. */
  marks = new Int32Array(1024);
  private stamp = 0;

  get size(): number {
    return this.byId.size;
  }

  handleOf(id: string): number {
    return this.byId.get(id) ?? NONE;
  }

  /** Whether `h` is (still) the handle of `id` (a handle taken earlier may have been let go, or reused since). */
  is(h: number, id: string): boolean {
    return h >= 0 && h < this.ids.length && this.ids[h] === id;
  }

  id(h: number): string {
    return this.ids[h]!;
  }

  key(h: number): SeriesKey {
    return this.keys[h]!;
  }

  /** A new handle for `id` (not held yet). */
  add(id: string, key: SeriesKey): number {
    let h = this.free.pop();
    if (h === undefined) {
      h = this.ids.length;
      this.ids.push(id);
      this.keys.push(key);
      if (h >= this.logs.length) this.grow(2 * this.logs.length);
    } else {
      this.ids[h] = id;
      this.keys[h] = key;
    }
    this.logs[h] = 0;
    this.lastShard[h] = NONE;
    this.lastHour[h] = NONE;
    this.lastRow[h] = NONE;
    this.walLen[h] = 0;
    this.byId.set(id, h);
    for (const k in key.tags) this.post(k, key.tags[k]!, h);
    return h;
  }

  /**
   * Handles of series whose tag `k` may be `v` (a handle may be listed twice, let go, or now
   * another series': check keyOf), or undefined when no series was ever given the pair.
   */
  withTag(k: string, v: string): readonly number[] | undefined {
    return this.postings.get(k)?.get(v)?.handles;
  }

  /** The handle's key, or null when the handle is free. */
  keyOf(h: number): SeriesKey | null {
    return h >= 0 && h < this.keys.length ? this.keys[h]! : null;
  }

  /**
   * A new mark for `marks`: a pass over handles sets a handle's mark to it when it first meets the
   * handle, so a handle listed twice is taken once without a Set of them.
   */
  nextStamp(): number {
    if (++this.stamp === 0x7fff_ffff) {
      this.marks.fill(0);
      this.stamp = 1;
    }
    return this.stamp;
  }

  private post(k: string, v: string, h: number): void {
    let byValue = this.postings.get(k);
    if (!byValue) this.postings.set(k, (byValue = new Map()));
    let p = byValue.get(v);
    if (!p) byValue.set(v, (p = { handles: [], swept: 0 }));
    p.handles.push(h);
    if (p.handles.length >= 2 * Math.max(p.swept, 16)) this.sweep(p, k, v, byValue);
  }

  /** Keeps each live handle whose series has the pair, once; the list goes when none is left. */
  private sweep(p: Postings, k: string, v: string, byValue: Map<string, Postings>): void {
    const kept: number[] = [];
    const stamp = this.nextStamp();
    for (const h of p.handles) {
      if (this.marks[h] === stamp) continue;
      this.marks[h] = stamp;
      const key = this.keys[h];
      if (key && Object.hasOwn(key.tags, k) && key.tags[k] === v) kept.push(h);
    }
    p.handles = kept;
    p.swept = kept.length;
    if (kept.length === 0) byValue.delete(v);
  }

  /** One more log of `h`. */
  ref(h: number): void {
    this.logs[h]!++;
  }

  /** One log of `h` fewer: the handle is let go with its last. */
  unref(h: number): void {
    if (--this.logs[h]! > 0) return;
    this.byId.delete(this.ids[h]!);
    // '' and null keep the arrays' element kinds: an id is never empty.
    this.ids[h] = '';
    this.keys[h] = null;
    this.walDead += this.walLen[h]!;
    this.walLen[h] = 0;
    this.lastRow[h] = NONE;
    this.free.push(h);
  }

  /** The handle's logged series part, or null when not made yet. A view of the arena: use it before the next `setWal`. */
  walOf(h: number): Uint8Array | null {
    const n = this.walLen[h]!;
    return n === 0 ? null : this.wal.subarray(this.walAt[h], this.walAt[h]! + n);
  }

  setWal(h: number, bytes: Uint8Array): void {
    if (this.walLen[h] !== 0 || bytes.length === 0) return;
    if (this.walUsed + bytes.length > this.wal.length) this.repackWal(bytes.length);
    this.wal.set(bytes, this.walUsed);
    this.walAt[h] = this.walUsed;
    this.walLen[h] = bytes.length;
    this.walUsed += bytes.length;
  }

  /** A fresh arena with the live handles' bytes only, room for `more`: grown when they fill it, the same size when let-go bytes were most of it. */
  private repackWal(more: number): void {
    const live = this.walUsed - this.walDead;
    const size = live + more > this.wal.length / 2 ? Math.max(2 * this.wal.length, 2 * (live + more)) : this.wal.length;
    const old = this.wal;
    const out = new Uint8Array(size);
    let used = 0;
    for (let h = 0; h < this.ids.length; h++) {
      const n = this.walLen[h]!;
      if (n === 0) continue;
      out.set(old.subarray(this.walAt[h], this.walAt[h]! + n), used);
      this.walAt[h] = used;
      used += n;
    }
    this.wal = out;
    this.walUsed = used;
    this.walDead = 0;
  }

  private grow(n: number): void {
    this.logs = grown(this.logs, n);
    this.lastShard = grown(this.lastShard, n);
    this.lastHour = grown(this.lastHour, n);
    this.lastRow = grown(this.lastRow, n);
    this.walAt = grown(this.walAt, n);
    this.walLen = grown(this.walLen, n);
    this.marks = grown(this.marks, n);
  }
}

/** One tag pair's handles (SeriesTable.postings), and their count after the last sweep. */
interface Postings {
  handles: number[];
  swept: number;
}

/**
 * One shard-window's logs as rows: a log is a chain of blocks in the window's pool (head, tail,
 * start, length: BlockLog), or, for a log whose first append was large (records), pieces of the
 * log file (`disk`, with its length in `length`). `rows` finds a series' row; `byMetric` the rows
 * of a metric (a scan, a query, visits the logs of its metric only: every series of the shard was
 * ~20 ms per single-series query at 60,000 series, on the HTTP thread). Released rows are reused.
 */
export class LogTable {
  /** Series handle → row, in the order the logs were made. */
  readonly rows = new Map<number, number>();
  readonly byMetric = new Map<string, Set<number>>();
  /** The window's in-memory log bytes (blocks.ts): replaced when the log rewrite repacks them. */
  pool: BlockPool | null = null;
  series = new Int32Array(64);
  head = new Int32Array(64);
  tail = new Int32Array(64);
  start = new Int32Array(64);
  length = new Float64Array(64);
  /** Per row, its pieces of the log file, or null for a log in the pool. */
  disk: (Spans | null)[] = [];
  private used = 0;
  private readonly free: number[] = [];

  get size(): number {
    return this.rows.size;
  }

  /** A new empty log of handle `h` and `metric`; `disk`: its bytes go to the file. */
  add(h: number, metric: string, disk: boolean): number {
    let row = this.free.pop();
    if (row === undefined) {
      row = this.used++;
      if (row >= this.series.length) this.grow(2 * this.series.length);
      this.disk.push(null);
    }
    this.series[row] = h;
    this.head[row] = this.tail[row] = NO_BLOCK;
    this.start[row] = 0;
    this.length[row] = 0;
    this.disk[row] = disk ? { at: new Float64Array(8), n: 0 } : null;
    if (!disk) this.pool ??= new BlockPool();
    this.rows.set(h, row);
    let of = this.byMetric.get(metric);
    if (!of) this.byMetric.set(metric, (of = new Set()));
    of.add(row);
    return row;
  }

  /** Row `row` (of handle `h`, `metric`) let go whole: its blocks count as released in the pool. */
  remove(row: number, h: number, metric: string): void {
    this.rows.delete(h);
    const of = this.byMetric.get(metric);
    if (of) {
      of.delete(row);
      if (of.size === 0) this.byMetric.delete(metric);
    }
    if (!this.disk[row]) {
      this.load(row);
      this.pool!.clear(cursor);
    }
    this.disk[row] = null;
    this.series[row] = NONE;
    this.length[row] = 0;
    this.free.push(row);
  }

  /** `data` copied to the end of an in-memory row. */
  append(row: number, data: Uint8Array): void {
    this.load(row);
    this.pool!.append(cursor, data);
    this.store(row);
  }

  /** An in-memory row's first `n` bytes released (n < its length). */
  dropHead(row: number, n: number): void {
    this.load(row);
    this.pool!.dropHead(cursor, n);
    this.store(row);
  }

  /** An in-memory row's bytes now (see BlockPool.read). */
  read(row: number): Uint8Array {
    return this.pool!.read(this.head[row]!, this.start[row]!, this.length[row]!);
  }

  /** The in-memory rows' live bytes moved to a fresh pool (the old one stays with the reads that hold it). */
  repack(): void {
    const old = this.pool;
    if (!old) return;
    const fresh = new BlockPool();
    for (const row of this.rows.values()) {
      if (this.disk[row]) continue;
      const bytes = this.read(row);
      cursor.head = cursor.tail = NO_BLOCK;
      cursor.start = cursor.length = 0;
      fresh.append(cursor, bytes);
      this.store(row);
    }
    this.pool = fresh;
  }

  private load(row: number): void {
    cursor.head = this.head[row]!;
    cursor.tail = this.tail[row]!;
    cursor.start = this.start[row]!;
    cursor.length = this.length[row]!;
  }

  private store(row: number): void {
    this.head[row] = cursor.head;
    this.tail[row] = cursor.tail;
    this.start[row] = cursor.start;
    this.length[row] = cursor.length;
  }

  private grow(n: number): void {
    this.series = grown(this.series, n);
    this.head = grown(this.head, n);
    this.tail = grown(this.tail, n);
    this.start = grown(this.start, n);
    this.length = grown(this.length, n);
  }
}
