import { mkdirSync, openSync, fstatSync, readSync, fsyncSync, close, closeSync, ftruncateSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import {
  bulkTurn,
  grown,
  LeaseLostError,
  UnavailableError,
  type HotAppend,
  type HotCursor,
  type HotLog,
  type HotLogPart,
  type HotScan,
  type HotTier,
  type HotTierStats,
  type Lease,
  type SeriesKey,
  type ShardRef,
  WINDOW_MS,
  internName,
  isInterned,
  selects,
  selectsAll,
  type TagSelector,
} from '@s4/core';
import { WAL_HEADER_BYTES, decodeWal, encodeHotAppends, encodeWalRecord, encodeWalRecordAt, walSeriesBytes, type WalAppend, type WalRecord } from '@s4/format';
import { LogTable, NONE, SeriesTable, type Spans } from './tables.js';

/** A window start as the series table's `lastHour` holds it: hours since the epoch, or -1 (matching no window) for a start not on an hour. */
function hourOf(window: number): number {
  const h = window / WINDOW_MS;
  return Number.isInteger(h) && h >= 0 && h < 2 ** 30 ? h | 0 : -1;
}

/** The log file open for reading; `open` false once closed (its descriptor number may then belong to another file). */
interface LogFile {
  readonly fd: number;
  open: boolean;
}

/**
 * Bytes of log records encoded between two writes of a rewrite. The rewrite runs on the HTTP
 * thread (embedded mode) and encodes synchronously up to here: 1 MB of small metric records took
 * ~30 ms of the event loop, 256 KB about a quarter.
 */
const REWRITE_CHUNK_BYTES = 256 * 1024;
/** Live logs per `appends` record of a rewrite. */
const REWRITE_BATCH = 4096;

/** Bytes of the log read and decoded at a time when it is replayed at start (an append record is at most a few MB). */
const REPLAY_CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * A log whose first append is at least this many bytes keeps its bytes in the log file, not in
 * memory. Below it (a metric's sample or a few), a span (16 bytes) would save little and a read
 * would cost a system call per append.
 */
const DISK_MIN_BYTES = 256;

/**
 * A series key as the log records it (the JSON of keyJson), made each time it is needed and not
 * memoised: keyJson would keep a copy alive beside every series the write path's caches hold.
 */
const keyText = (k: SeriesKey) => JSON.stringify({ metric: k.metric, tags: k.tags });

interface ShardState {
  /** Its number in this process (the series table's `lastShard`). */
  readonly index: number;
  generation: number;
  fence: number;
  lease: { owner: string; fence: number; expiresAt: number } | null;
  /** Each window's logs (tables.ts), dropped with its last. */
  windows: Map<number, LogTable>;
}

export interface EmbeddedHotTierOptions {
  dir: string;
  /** 'always': fsync before acknowledging (group commit); 'never': leave it to the OS (tests, benches). */
  fsync: 'always' | 'never';
  /** Bytes of the log read at a time when it is replayed at start (default 8 MiB; tests use small pieces). */
  replayChunkBytes?: number;
  /** Rewrite the log once it holds at least this many released bytes (and more released than live). */
  compactSlackBytes?: number;
  /** A log whose first append has at least this many bytes keeps them in the file, not in memory (default 256; Infinity: all in memory). */
  diskMinBytes?: number;
  now?: () => number;
  /** Failures of background work (log rewrites) that no request sees. */
  onError?: (e: Error) => void;
}

/**
 * In-process hot tier: state in memory, every change first appended to a log file on disk,
 * replayed at start. Appends from concurrent requests share one write + fsync (group commit).
 * One process owns the directory.
 */
export class EmbeddedHotTier implements HotTier {
  private readonly shards = new Map<string, ShardState>();
  /**
   * Every series with a log in some window (tables.ts): by id, its key as the logs hold it, and
   * its appends' series part as logged, so a series written every scrape encodes it once.
   */
  private readonly series = new SeriesTable();
  /**
   * Appends' hints (HotAppend.hint) → the handle last found for the series that held the hint
   * then: checked against the append's id before use (0 in a slot never set is a handle like any other).
   */
  private byHint = new Int32Array(1024);
  private readonly path: string;
  private file!: FileHandle;
  private fileBytes = 0;
  /** File size right after the last rewrite (0: never rewritten in this process). */
  private rewrittenBytes = 0;
  private liveBytes = 0;
  /** Size of the log file found at start. */
  private replayedSize = 0;
  /** Sample bytes released since the log was last rewritten (or since it began): what a rewrite would drop. */
  private releasedBytes = 0;
  /** `apply(at)`: the commit's records applied, `at` where its bytes start in the file. */
  private pending: { buf: Buffer; apply: (at: number) => void; resolve: () => void; reject: (e: unknown) => void }[] = [];
  /** Reads the bytes of logs kept in the file (its own descriptor: the append one is write-only). */
  private reader!: LogFile;
  /** Files replaced by a rewrite, still open for reads that took their offsets before it (closed after REWRITTEN_READ_MS). */
  private readonly retired = new Set<LogFile>();
  private readonly diskMin: number;
  private writing: Promise<void> | null = null;
  /** A failed append may have left bytes after `fileBytes`; they are cut off before the next write. */
  private torn = false;
  private readonly onError: (e: Error) => void;
  private readonly now: () => number;

  private constructor(private readonly options: EmbeddedHotTierOptions) {
    this.path = join(options.dir, 'hot.wal');
    this.now = options.now ?? Date.now;
    this.onError = options.onError ?? ((e) => process.emitWarning(e));
    this.diskMin = options.diskMinBytes ?? DISK_MIN_BYTES;
  }

  static async open(options: EmbeddedHotTierOptions): Promise<EmbeddedHotTier> {
    const tier = new EmbeddedHotTier(options);
    await tier.replay();
    return tier;
  }

  private async replay(): Promise<void> {
    mkdirSync(this.options.dir, { recursive: true });
    const validBytes = this.replayFile();
    if (validBytes < this.replayedSize) {
      // A torn tail from a crash mid-write: never acknowledged, so it is dropped.
      const fd = openSync(this.path, 'r+');
      ftruncateSync(fd, validBytes);
      fsyncSync(fd);
      closeSync(fd);
    }
    this.file = await open(this.path, 'a');
    this.reader = { fd: openSync(this.path, 'r'), open: true };
    this.fileBytes = validBytes;
    if (this.shouldCompact())
      await this.compact().catch((e: Error) => this.onError(new Error(`rewriting the hot-tier log ${this.path} at start failed (the old log stays in use): ${e.message}`)));
  }

  /**
   * Apply the log's records a piece at a time (replayChunkBytes and the records that piece
   * holds), not the whole file read into memory: appends copy their bytes into the series logs, so
   * the file and its decoded records would sit beside the state they rebuild (a 110 MB log after a
   * records load took the process to ~600 MiB at start). Returns where the intact records end.
   */
  private replayFile(): number {
    let fd: number;
    try {
      fd = openSync(this.path, 'r');
    } catch {
      return 0;
    }
    try {
      this.replayedSize = fstatSync(fd).size;
      let valid = 0;
      // Bytes after the last whole record of the previous piece: the start of a record the next piece completes.
      let carry = Buffer.alloc(0);
      const chunk = this.options.replayChunkBytes ?? REPLAY_CHUNK_BYTES;
      let want = chunk;
      for (let at = 0; at < this.replayedSize; ) {
        const piece = Buffer.allocUnsafe(Math.min(want, this.replayedSize - at));
        const n = readSync(fd, piece, 0, piece.length, at);
        if (n <= 0) break;
        // Where `buf` starts in the file: appends kept on disk point there.
        const bufAt = at - carry.length;
        at += n;
        const buf = carry.length > 0 ? Buffer.concat([carry, piece.subarray(0, n)]) : piece.subarray(0, n);
        // Views of the piece: kept logs copy them, logs kept on disk only note where they are.
        const { records, validBytes } = decodeWal(buf, { views: true });
        for (const r of records) this.apply(r, (data) => bufAt + data.byteOffset - buf.byteOffset);
        valid += validBytes;
        const rest = buf.length - validBytes;
        if (rest >= WAL_HEADER_BYTES) {
          const need = WAL_HEADER_BYTES + buf.readUInt32LE(validBytes);
          // A whole record that failed its check: the log ends here, whatever follows.
          if (need <= rest) break;
          // A record longer than a piece: read at least the rest of it next.
          want = Math.max(chunk, need - rest);
        } else want = chunk;
        // A copy: a view would keep the whole piece alive.
        carry = Buffer.from(buf.subarray(validBytes));
      }
      return valid;
    } finally {
      closeSync(fd);
    }
  }

  /** Once released bytes dominate the file, rewriting it makes the log (and the next replay) small again. */
  private shouldCompact(): boolean {
    // Framing and series keys make a freshly rewritten file larger than the live data, so count
    // only what was appended since the last rewrite, or one rewrite would call for the next.
    const grown = this.fileBytes - this.rewrittenBytes;
    // Sample bytes on both sides: each record's framing and key cost the same whether its bytes
    // are live or released. (Against the file size, keys and framing made a log of many series
    // with a few bytes each look mostly released: at a million series it was rewritten whole
    // every 64 MB of appends, with appends waiting meanwhile.)
    return grown > (this.options.compactSlackBytes ?? 64 * 1024 * 1024) && this.releasedBytes > this.liveBytes;
  }

  private shard(ref: ShardRef): ShardState {
    const k = `${ref.ns}/${ref.shard}`;
    let s = this.shards.get(k);
    if (!s) {
      s = { index: this.shards.size, generation: 0, fence: 0, lease: null, windows: new Map() };
      this.shards.set(k, s);
    }
    return s;
  }

  /** Apply one logged record; `fileAt(data)` says where an append's data is in the log file. */
  private apply(r: WalRecord, fileAt: (data: Uint8Array, i: number) => number): void {
    if (r.type === 'appends') {
      for (let i = 0; i < r.entries.length; i++) {
        const e = r.entries[i]!;
        this.applyAppend(this.shard(e), e.window, e.id, e.key, e.data, fileAt(e.data, i));
      }
      return;
    }
    const s = this.shard(r);
    switch (r.type) {
      case 'append':
        this.applyAppend(s, r.window, r.id, r.key, r.data, fileAt(r.data, 0));
        break;
      case 'release':
        this.releaseLog(s, r.window, r.id, r.length);
        break;
      case 'releases':
        for (const c of r.cursors) this.releaseLog(s, r.window, c.id, c.length);
        break;
      case 'generation':
        s.generation = Math.max(s.generation, r.value);
        break;
      case 'fence':
        s.fence = Math.max(s.fence, r.value);
        break;
    }
  }

  /** The first `length` bytes of the log of `id` in `window` dropped (all of it: the log goes, and its window once empty). */
  private releaseLog(s: ShardState, window: number, id: string, length: number): void {
    const w = s.windows.get(window);
    const h = this.series.handleOf(id);
    const row = h === NONE ? undefined : w?.rows.get(h);
    if (!w || row === undefined) return;
    const logLength = w.length[row]!;
    if (length >= logLength) {
      w.remove(row, h, this.series.key(h).metric);
      const t = this.series;
      if (t.lastShard[h] === s.index && t.lastHour[h] === hourOf(window)) t.lastRow[h] = NONE;
      this.liveBytes -= logLength;
      this.releasedBytes += logLength;
      t.unref(h);
    } else {
      const disk = w.disk[row];
      if (disk) {
        dropHead(disk, length);
        w.length[row] = logLength - length;
      } else w.dropHead(row, length);
      this.liveBytes -= length;
      this.releasedBytes += length;
    }
    if (w.size === 0) s.windows.delete(window);
  }

  /**
   * The handle of the series `e` appends to, or NONE: through `e.hint` when the handle noted for it
   * is still `e.id`'s, else looked up by the id (and noted for the hint).
   */
  private handleOfAppend(e: HotAppend): number {
    const t = this.series;
    const n = e.hint;
    if (n !== undefined && n < this.byHint.length) {
      const h = this.byHint[n]!;
      if (t.is(h, e.id)) return h;
    }
    const h = t.handleOf(e.id);
    if (h !== NONE) this.noteHint(e, h);
    return h;
  }

  /** `h` noted as the handle of `e.hint` (a hint that is not a small whole number is not kept). */
  private noteHint(e: HotAppend, h: number): void {
    const n = e.hint;
    if (n === undefined || !(Number.isInteger(n) && n >= 0 && n < MAX_HINTS)) return;
    if (n >= this.byHint.length) this.byHint = grown(this.byHint, Math.min(MAX_HINTS, Math.max(2 * this.byHint.length, n + 1)));
    this.byHint[n] = h;
  }

  /**
   * `data` appended to the log of `id` in `window`; `at`: where `data` is in the log file. `key`:
   * the series key, or its JSON as logged. Returns the series' handle (made for a new series).
   */
  private applyAppend(s: ShardState, window: number, id: string, key: string | SeriesKey, data: Uint8Array, at: number, h = this.series.handleOf(id)): number {
    let w = s.windows.get(window);
    if (!w) s.windows.set(window, (w = new LogTable()));
    if (h === NONE) h = this.seriesOf(id, key);
    let row = w.rows.get(h);
    if (row === undefined) {
      this.series.ref(h);
      row = w.add(h, this.series.key(h).metric, data.length >= this.diskMin);
    }
    const t = this.series;
    t.lastShard[h] = s.index;
    t.lastHour[h] = hourOf(window);
    t.lastRow[h] = row;
    this.appendRow(w, row, data, at);
    return h;
  }

  /** `data` appended to the log in `row` of `w`; `at`: where `data` is in the log file. */
  private appendRow(w: LogTable, row: number, data: Uint8Array, at: number): void {
    const disk = w.disk[row];
    if (disk) {
      addSpan(disk, at, data.length);
      w.length[row]! += data.length;
    } else w.append(row, data);
    this.liveBytes += data.length;
  }

  /**
   * A new handle for `id`, with its key: the write path's key object itself when its strings are
   * interned (internName; the scan path's keys are), else one parsed from its JSON with its
   * strings interned (a key replayed from the log, or one a request built). The id is the
   * caller's string, not interned: ids are unique, and would only fill the pool.
   */
  private seriesOf(id: string, key: string | SeriesKey): number {
    if (typeof key !== 'string' && isInterned(key)) return this.series.add(id, key);
    // The parsed object itself (its values interned in place): JSON.parse builds compact objects,
    // where a prototype-less copy would be a dictionary several times the size. Readers look tags
    // up as own properties, and the validator refuses `__proto__`.
    const parsed = JSON.parse(typeof key === 'string' ? key : keyText(key)) as { metric: string; tags: Record<string, string> };
    for (const k of Object.keys(parsed.tags)) parsed.tags[k] = internName(parsed.tags[k]!);
    return this.series.add(id, { metric: internName(parsed.metric), tags: parsed.tags });
  }

  /** Append records to the log, fsync, then apply them; concurrent callers share one fsync. */
  private commit(records: WalRecord[]): Promise<void> {
    // Where each record starts in `buf` and where its appends' data start in the record.
    const starts: number[] = [];
    const dataAt: number[][] = [];
    let bytes = 0;
    const parts = records.map((r) => {
      const at: number[] = [];
      const b = encodeWalRecordAt(r, at);
      starts.push(bytes);
      dataAt.push(at);
      bytes += b.length;
      return b;
    });
    // One record (every append commit) is its own buffer: a concat would copy it whole again.
    const buf = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
    return this.enqueue(buf, (fileAt) => records.forEach((r, i) => this.apply(r, (_, j) => fileAt + starts[i]! + dataAt[i]![j]!)));
  }

  /**
   * Appends entries[from, to) as one `appends` record, without a WalAppend per entry: each key's
   * id and key JSON are encoded once (walSeries), and applying takes the entries as they are.
   * The bytes are those `commit` writes for the same appends.
   */
  private commitAppends(entries: readonly HotAppend[], from: number, to: number): Promise<void> {
    const t = this.series;
    const series = new Array<Uint8Array>(to - from);
    // Each entry's handle as found now: applying checks that it still names the entry's series
    // (a release may let it go meanwhile), so nothing is made for a commit that may fail.
    const handles = new Int32Array(to - from);
    for (let i = from; i < to; i++) {
      const e = entries[i]!;
      const h = this.handleOfAppend(e);
      handles[i - from] = h;
      let bytes = h === NONE ? null : t.walOf(h);
      if (bytes === null) {
        // A known series logs the key its logs hold (a replay then makes the same one).
        bytes = walSeriesBytes(e.id, keyText(h === NONE ? e.key : t.key(h)));
        if (h !== NONE) t.setWal(h, bytes);
      }
      series[i - from] = bytes;
    }
    const dataAt = new Uint32Array(to - from);
    const buf = encodeHotAppends(entries, from, to, series, dataAt);
    return this.enqueue(buf, (fileAt) => {
      // Appends of one request share a ShardRef per shard: its state looked up once, not by a `ns/shard` string per append.
      const states = new Map<ShardRef, ShardState>();
      // The window table of the last append that went to its series' last log (a scrape's appends share one).
      let w: LogTable | undefined;
      let wState: ShardState | null = null;
      let wWindow = Number.NaN;
      for (let i = from; i < to; i++) {
        const e = entries[i]!;
        let s = states.get(e.ref);
        if (!s) states.set(e.ref, (s = this.shard(e.ref)));
        let h = handles[i - from]!;
        if (!t.is(h, e.id)) h = this.handleOfAppend(e);
        const at = fileAt + dataAt[i - from]!;
        if (h !== NONE && t.lastShard[h] === s.index && t.lastRow[h] !== NONE && t.lastHour[h] === hourOf(e.window)) {
          if (s !== wState || e.window !== wWindow) {
            w = s.windows.get(e.window);
            wState = s;
            wWindow = e.window;
          }
          this.appendRow(w!, t.lastRow[h]!, e.data, at);
        } else if (h !== NONE) this.applyAppend(s, e.window, e.id, e.key, e.data, at, h);
        else {
          h = this.applyAppend(s, e.window, e.id, e.key, e.data, at, h);
          t.setWal(h, series[i - from]!);
          this.noteHint(e, h);
        }
      }
    });
  }

  /** `buf` written and made durable with the next group commit; `apply(at)` then, `at` where `buf` starts in the file. */
  private enqueue(buf: Buffer, apply: (at: number) => void): Promise<void> {
    return new Promise((resolve, reject) => {
      this.pending.push({ buf, apply, resolve, reject });
      this.writing ??= this.drain();
    });
  }

  private async drain(): Promise<void> {
    for (;;) {
      while (this.pending.length > 0) {
        const batch = this.pending;
        this.pending = [];
        try {
          await this.repair();
          const bytes = await this.writeAll(batch.map((b) => b.buf));
          if (this.options.fsync === 'always') await this.file.datasync();
          let at = this.fileBytes;
          this.fileBytes += bytes;
          let since = performance.now();
          for (const b of batch) {
            // Each commit is applied whole; between commits, once a slice has run, requests get a turn.
            if (performance.now() - since >= APPLY_SLICE_MS) {
              await bulkTurn();
              since = performance.now();
            }
            b.apply(at);
            at += b.buf.length;
            b.resolve();
          }
        } catch (e) {
          // A failed or short write may have left part of the batch on disk. It is not
          // acknowledged, and anything appended after it would be unreadable on replay (replay
          // stops at the first torn record), so the tail is cut back before the next write.
          this.torn = true;
          await this.repair().catch(() => undefined);
          const error = unavailable(e, 'appending to the hot-tier log');
          for (const b of batch) b.reject(error);
        }
      }
      if (!this.shouldCompact()) break;
      // Commits that arrive while the log is rewritten wait in `pending`: go round again for them.
      try {
        await this.compact();
      } catch (e) {
        // The old log is still whole (the rewrite publishes by rename); try again once it has grown more.
        this.rewrittenBytes = this.fileBytes;
        this.onError(new Error(`rewriting the hot-tier log ${this.path} failed (the old log stays in use): ${(e as Error).message}`));
      }
    }
    // No await since the last look at `pending`, so no commit can be left behind here.
    this.writing = null;
  }

  /**
   * Write all of `bufs`, in order, and say how many bytes that was. The commits of a group go out
   * in one writev (they were copied into one buffer first: 5 MB a scrape round); a write may be
   * short (a nearly full disk), and the rest must follow it, a buffer at a time.
   */
  private async writeAll(bufs: readonly Buffer[], file: FileHandle = this.file): Promise<number> {
    let total = 0;
    for (const b of bufs) total += b.length;
    let done = bufs.length > 1 ? (await file.writev(bufs)).bytesWritten : 0;
    for (const buf of bufs) {
      if (done >= buf.length) {
        done -= buf.length;
        continue;
      }
      let at = done;
      done = 0;
      while (at < buf.length) {
        const { bytesWritten } = await file.write(buf, at, buf.length - at);
        if (bytesWritten <= 0) throw Object.assign(new Error('write made no progress'), { code: 'EIO' });
        at += bytesWritten;
      }
    }
    return total;
  }

  /** After a failed append: cut the file back to its last acknowledged byte, durably. */
  private async repair(): Promise<void> {
    if (!this.torn) return;
    await this.file.truncate(this.fileBytes);
    await this.file.datasync();
    this.torn = false;
  }

  /** Rewrite the log as the live state only; atomic by rename, so a crash keeps one whole file. */
  private async compact(): Promise<void> {
    const tmp = `${this.path}.tmp`;
    // Logs kept on disk and where their bytes start in the new file (they move there once it is in place).
    const moved: { w: LogTable; row: number; at: number }[] = [];
    const out = await open(tmp, 'w');
    let bytes = 0;
    try {
      // Batched writes, and an await between them: a rewrite of a large log must not hold the
      // event loop (commits wait in `pending` meanwhile, and nothing else changes the state).
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      const flushChunk = async () => {
        // One writev of the chunk's records: concatenating them first copied every live byte once more.
        await this.writeAll(chunk, out);
        chunk = [];
        chunkBytes = 0;
      };
      // Synchronous per record; an await only when a chunk is full (an await per record would
      // cost a microtask turn for each of millions of series logs).
      const put = (b: Buffer): boolean => {
        chunk.push(b);
        chunkBytes += b.length;
        bytes += b.length;
        return chunkBytes >= REWRITE_CHUNK_BYTES;
      };
      // Live logs go as `appends` records of up to REWRITE_BATCH logs: one frame per log was one
      // buffer, writer and checksum each, minutes of the HTTP thread at a million series.
      let batch: WalAppend[] = [];
      let batchTables: LogTable[] = [];
      let batchRows: number[] = [];
      let batchBytes = 0;
      const putBatch = (): boolean => {
        const at: number[] = [];
        const b = encodeWalRecordAt({ type: 'appends', entries: batch }, at);
        // A log kept on disk is one piece of the new file: its append's data.
        for (let i = 0; i < batchRows.length; i++) if (batchTables[i]!.disk[batchRows[i]!]) moved.push({ w: batchTables[i]!, row: batchRows[i]!, at: bytes + at[i]! });
        batch = [];
        batchTables = [];
        batchRows = [];
        batchBytes = 0;
        return put(b);
      };
      for (const [k, s] of this.shards) {
        const [ns, shardText] = splitShardKey(k);
        const shard = Number(shardText);
        put(encodeWalRecord({ type: 'generation', ns, shard, value: s.generation }));
        if (put(encodeWalRecord({ type: 'fence', ns, shard, value: s.fence }))) await flushChunk();
        for (const [window, w] of s.windows)
          for (const [h, row] of w.rows) {
            const data = this.bytesOf(w, row);
            const id = this.series.id(h);
            const key = keyText(this.series.key(h));
            batch.push({ ns, shard, window, id, key, data });
            batchTables.push(w);
            batchRows.push(row);
            batchBytes += data.length + key.length + id.length;
            if ((batch.length >= REWRITE_BATCH || batchBytes >= REWRITE_CHUNK_BYTES) && putBatch()) await flushChunk();
          }
        // A shard's generation and fence come before its logs, as replay applies them.
        if (batch.length > 0 && putBatch()) await flushChunk();
      }
      await flushChunk();
      await out.sync();
    } catch (e) {
      await out.close().catch(() => undefined);
      await rm(tmp, { force: true }).catch(() => undefined);
      throw e;
    }
    await out.close();
    await this.file.close();
    await rename(tmp, this.path);
    // From here the old offsets mean nothing: the new file is read for every log kept on disk.
    // Reads that took offsets in the old file keep reading it (the open descriptor keeps it) for a while.
    const old = this.reader;
    this.reader = { fd: openSync(this.path, 'r'), open: true };
    this.retired.add(old);
    setTimeout(() => this.retire(old), REWRITTEN_READ_MS).unref();
    for (const { w, row, at } of moved) w.disk[row] = { at: Float64Array.of(at, w.length[row]!, 0, 0), n: 1 };
    const dir = await open(this.options.dir, 'r');
    await dir.sync();
    await dir.close();
    this.repackPools();
    this.file = await open(this.path, 'a');
    this.fileBytes = bytes;
    this.rewrittenBytes = bytes;
    this.releasedBytes = 0;
  }

  /**
   * Released blocks stay in their pool until its window goes (blocks.ts); a window that lives on
   * (late data, released part by part) moves its live logs to a fresh pool once released blocks
   * are most of it. Only the live bytes are copied; reads taken before keep the old pool.
   */
  private repackPools(): void {
    for (const s of this.shards.values()) for (const w of s.windows.values()) if (w.pool?.wasteful) w.repack();
  }

  /**
   * One `appends` record per COMMIT_APPENDS entries: each is encoded, written and applied as a
   * unit, and the event loop gets a turn between units, so a write of 40,000 series never holds
   * the HTTP thread for the whole of it. Resolves once every entry is durable.
   */
  async append(entries: readonly HotAppend[]): Promise<void> {
    if (entries.length === 0) return;
    const commits: Promise<void>[] = [];
    for (let i = 0; i < entries.length; i += COMMIT_APPENDS) {
      if (i > 0) await bulkTurn();
      const commit = this.commitAppends(entries, i, Math.min(entries.length, i + COMMIT_APPENDS));
      // Handled at once: a commit that fails (a full disk) while later ones are still being made
      // would otherwise be a rejection without a handler for a turn, which ends a Node process.
      commit.catch(() => undefined);
      commits.push(commit);
    }
    // Every commit is awaited, so one that failed is reported only once all of them have ended.
    const failed = (await Promise.allSettled(commits)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }


  async openWindows(ref: ShardRef): Promise<number[]> {
    return [...this.shard(ref).windows.keys()].sort((a, b) => a - b);
  }

  async readWindow(ref: ShardRef, window: number): Promise<HotLog[]> {
    let out: HotLog[] = [];
    for await (const part of this.readWindowParts(ref, window, Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY)) out = out.length === 0 ? part : out.concat(part);
    return out;
  }

  async *readWindowParts(ref: ShardRef, window: number, maxLogs: number, maxBytes: number): AsyncGenerator<HotLogPart> {
    const w = this.shard(ref).windows.get(window);
    if (!w) return;
    // The logs as they are now (where each one's bytes are: a later append or release changes
    // none of the bytes already there, and a release after a turn below may give a row to another
    // series), each read into a plain HotLog, since a flush takes every byte: no lazy getter and
    // its closures per log (a window of a shard at a million series is ~60,000 logs, all of it
    // garbage for the HTTP thread's collector once sent). The event loop gets a turn between logs
    // once a slice has run: a window of a busy shard is tens of MB.
    const n = w.size;
    const pool = w.pool;
    const file = this.reader;
    const ids = new Array<string>(n);
    const keys = new Array<SeriesKey>(n);
    const head = new Int32Array(n);
    const start = new Int32Array(n);
    const length = new Float64Array(n);
    const disk = new Array<Float64Array | null>(n);
    let i = 0;
    for (const [h, row] of w.rows) {
      ids[i] = this.series.id(h);
      keys[i] = this.series.key(h);
      head[i] = w.head[row]!;
      start[i] = w.start[row]!;
      length[i] = w.length[row]!;
      const d = w.disk[row];
      disk[i++] = d ? d.at.slice(0, 2 * d.n) : null;
    }
    // Positions are taken above, bytes read part by part: the caller's turns between parts are
    // like the turns below. A part is at most maxLogs logs, and more than one only within
    // maxBytes: the parts the RPC packs (hot-tier-rpc.ts), so that a part whose logs were all read
    // from the file, into one buffer in order, crosses to the flush's thread without a copy.
    let since = performance.now();
    for (let lo = 0; lo < n; ) {
      let hi = lo;
      let bytes = 0;
      let fileBytes = 0;
      while (hi < n && hi - lo < maxLogs && (hi === lo || bytes + length[hi]! <= maxBytes)) {
        bytes += length[hi]!;
        if (disk[hi]) fileBytes += length[hi]!;
        hi++;
      }
      const buf = new Uint8Array(fileBytes);
      let at = 0;
      const part: HotLogPart = [];
      // Every log of the part read from the file into `buf`: the part owns it (HotLogPart).
      if (fileBytes === bytes && fileBytes > 0) part.owned = buf.buffer;
      for (i = lo; i < hi; i++) {
        if ((i & 255) === 255 && performance.now() - since >= APPLY_SLICE_MS) {
          await bulkTurn();
          since = performance.now();
        }
        const d = disk[i];
        let data: Uint8Array;
        if (d) {
          data = buf.subarray(at, at + length[i]!);
          readSpans(file, d, d.length / 2, length[i]!, this.path, data);
          at += length[i]!;
        } else data = pool!.read(head[i]!, start[i]!, length[i]!);
        part.push({ id: ids[i]!, key: keys[i]!, window, data });
      }
      yield part;
      since = performance.now();
      lo = hi;
    }
  }

  /**
   * A log as it is now, its bytes read when `data` is first asked for (a query decodes only the
   * series its selector matches), from where they are now: appends and releases never change
   * bytes already in a block pool or in the file, and a rewrite leaves the old file open for a
   * while (and an old pool to the reads that hold it).
   */
  private hotLog(w: LogTable, row: number, window: number): HotLog {
    let read: () => Uint8Array;
    const d = w.disk[row];
    const length = w.length[row]!;
    if (!d) {
      // Blocks are not written again once released (blocks.ts), so the bytes as of now stay readable.
      const pool = w.pool!;
      const head = w.head[row]!;
      const start = w.start[row]!;
      read = () => pool.read(head, start, length);
    } else {
      const file = this.reader;
      const at = d.at.slice(0, 2 * d.n);
      const { n } = d;
      const path = this.path;
      read = () => readSpans(file, at, n, length, path);
    }
    const h = w.series[row]!;
    let data: Uint8Array | undefined;
    return {
      id: this.series.id(h),
      key: this.series.key(h),
      window,
      get data() {
        return (data ??= read());
      },
    };
  }

  /** A log's bytes now, from memory or read from the file (for a rewrite, which owns the state meanwhile). */
  private bytesOf(w: LogTable, row: number): Uint8Array {
    const d = w.disk[row];
    return d ? readSpans(this.reader, d.at, d.n, w.length[row]!, this.path) : w.read(row);
  }

  private retire(file: LogFile): void {
    if (!this.retired.delete(file)) return;
    file.open = false;
    // Off the event loop: the file was replaced by its rename, so its last close frees its pages,
    // GBs after a busy hour (2.4 s of the HTTP thread over the records bench's 2 h load).
    close(file.fd, (e) => {
      if (e) this.onError(new Error(`closing the replaced hot-tier log ${this.path}: ${e.message}`));
    });
  }

  async release(lease: Lease, window: number, cursors: readonly HotCursor[]): Promise<void> {
    this.assertHolder(lease);
    const { ns, shard } = lease.ref;
    if (cursors.length > 0) await this.commit([{ type: 'releases', ns, shard, window, cursors }]);
  }

  async scan(ref: ShardRef, metric: string, from: number, to: number, series?: TagSelector): Promise<HotScan> {
    const s = this.shard(ref);
    const logs: HotLog[] = [];
    // A selector with no condition picks every log: no test per log.
    const pick = series && !selectsAll(series) ? series : undefined;
    const windows = [...s.windows].filter(([window]) => window + WINDOW_MS > from && window < to);
    const handles = pick ? this.handlesWith(pick, metric, windows) : undefined;
    for (const [window, w] of windows) {
      if (handles) {
        for (const h of handles) {
          const row = w.rows.get(h);
          if (row !== undefined) logs.push(this.hotLog(w, row, window));
        }
        continue;
      }
      const of = w.byMetric.get(metric);
      if (of) for (const row of of) if (!pick || selects(pick, this.series.key(w.series[row]!).tags)) logs.push(this.hotLog(w, row, window));
    }
    return { generation: s.generation, logs };
  }

  /**
   * The live handles of `metric`'s series the selector picks, from the shortest list of a tag
   * equality it names (SeriesTable.withTag), or undefined when testing each log of the metric in
   * `windows` is cheaper (no equality, or one as common as the metric).
   */
  private handlesWith(pick: TagSelector, metric: string, windows: readonly (readonly [number, LogTable])[]): number[] | undefined {
    let shortest: readonly number[] | undefined;
    for (const k in pick.tags) {
      const list = this.series.withTag(k, pick.tags[k]!) ?? [];
      if (!shortest || list.length < shortest.length) shortest = list;
    }
    if (!shortest) return undefined;
    let logs = 0;
    for (const [, w] of windows) logs += w.byMetric.get(metric)?.size ?? 0;
    if (shortest.length >= logs) return undefined;
    const out: number[] = [];
    const stamp = this.series.nextStamp();
    const marks = this.series.marks;
    for (const h of shortest) {
      if (marks[h] === stamp) continue;
      marks[h] = stamp;
      const key = this.series.keyOf(h);
      if (key && key.metric === metric && selects(pick, key.tags)) out.push(h);
    }
    return out;
  }

  async seriesIn(ref: ShardRef, metric: string | undefined, from: number, to: number): Promise<SeriesKey[]> {
    const out = new Map<string, SeriesKey>();
    const s = this.shard(ref);
    for (const [window, w] of s.windows) {
      if (window + WINDOW_MS <= from || window >= to) continue;
      for (const [m, rows] of w.byMetric)
        if (metric === undefined || m === metric)
          for (const row of rows) {
            const h = w.series[row]!;
            out.set(this.series.id(h), this.series.key(h));
          }
    }
    return [...out.values()];
  }

  async bumpGeneration(lease: Lease): Promise<number> {
    this.assertHolder(lease);
    const s = this.shard(lease.ref);
    await this.commit([{ type: 'generation', ns: lease.ref.ns, shard: lease.ref.shard, value: s.generation + 1 }]);
    return s.generation;
  }

  async generation(ref: ShardRef): Promise<number> {
    return this.shard(ref).generation;
  }

  async acquireLease(ref: ShardRef, owner: string, ttlMs: number): Promise<Lease | null> {
    const s = this.shard(ref);
    const now = this.now();
    if (s.lease && s.lease.expiresAt > now && s.lease.owner !== owner) return null;
    if (s.lease && s.lease.expiresAt > now && s.lease.owner === owner) {
      s.lease.expiresAt = now + ttlMs;
      return { ref, owner, fence: s.lease.fence };
    }
    // Taken before the await: a second owner asking meanwhile must see it held, not get the same fence.
    const fence = s.fence + 1;
    const lease = { owner, fence, expiresAt: now + ttlMs };
    s.fence = fence;
    s.lease = lease;
    try {
      await this.commit([{ type: 'fence', ns: ref.ns, shard: ref.shard, value: fence }]);
    } catch (e) {
      if (s.lease === lease) s.lease = null; // never durable, never used; the fence number is skipped
      throw e;
    }
    return { ref, owner, fence };
  }

  async renewLease(lease: Lease, ttlMs: number): Promise<boolean> {
    // An expired lease stays here until another owner takes the shard (a new fence) or the
    // holder releases it (null), so one nobody took is still the holder's.
    const held = this.shard(lease.ref).lease;
    if (!held || held.fence !== lease.fence) return false;
    held.expiresAt = this.now() + ttlMs;
    return true;
  }

  async releaseLease(lease: Lease): Promise<void> {
    const s = this.shard(lease.ref);
    if (s.lease?.fence === lease.fence) s.lease = null;
  }

  private assertHolder(lease: Lease): void {
    const held = this.shard(lease.ref).lease;
    if (!held || held.fence !== lease.fence) throw new LeaseLostError(`${lease.ref.ns}/${lease.ref.shard}`, lease.fence);
  }

  async stats(): Promise<HotTierStats> {
    let logs = 0;
    for (const s of this.shards.values()) for (const w of s.windows.values()) logs += w.size;
    return { bytes: this.liveBytes, logs };
  }

  async shardStats(ref: ShardRef): Promise<HotTierStats> {
    let bytes = 0;
    let logs = 0;
    for (const w of this.shard(ref).windows.values()) {
      for (const row of w.rows.values()) bytes += w.length[row]!;
      logs += w.size;
    }
    return { bytes, logs };
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing;
    await this.file.close();
    for (const f of [...this.retired]) this.retire(f);
    this.reader.open = false;
    closeSync(this.reader.fd);
  }
}

/** How long a file replaced by a rewrite stays open for reads that took their offsets in it (a query's lazy reads, a flush). */
const REWRITTEN_READ_MS = 60_000;

/** Hints (HotAppend.hint) at or past this are not kept (looked up by id): a bound on `byHint`, 64 MB. */
const MAX_HINTS = 1 << 24;

/** Appends per log record and per turn of the event loop (a few milliseconds of encoding or applying). */
const COMMIT_APPENDS = 4096;

/** How long applying committed appends may hold the event loop before it gets a turn. */
const APPLY_SLICE_MS = 10;

/** Note that a log's next bytes are at `at` in the file: one more piece, or the last one grown when they follow it. */
function addSpan(d: Spans, at: number, length: number): void {
  const last = 2 * (d.n - 1);
  if (d.n > 0 && d.at[last]! + d.at[last + 1]! === at) {
    d.at[last + 1]! += length;
    return;
  }
  if (2 * d.n + 2 > d.at.length) {
    const next = new Float64Array(Math.max(8, Math.ceil(d.at.length * 1.5)) & ~1);
    next.set(d.at.subarray(0, 2 * d.n));
    d.at = next;
  }
  d.at[2 * d.n] = at;
  d.at[2 * d.n + 1] = length;
  d.n++;
}

/** Drop a log's first `length` bytes (released by a flush) from its pieces. */
function dropHead(d: Spans, length: number): void {
  let i = 0;
  let left = length;
  while (left > 0 && i < d.n) {
    const len = d.at[2 * i + 1]!;
    if (len <= left) {
      left -= len;
      i++;
    } else {
      d.at[2 * i] = d.at[2 * i]! + left;
      d.at[2 * i + 1] = len - left;
      left = 0;
    }
  }
  d.at.copyWithin(0, 2 * i, 2 * d.n);
  d.n -= i;
}

/** A log's bytes from the file, piece by piece (positional reads: the page cache serves what was appended lately). */
function readSpans(file: LogFile, at: Float64Array, n: number, length: number, path: string, out: Uint8Array = new Uint8Array(length)): Uint8Array {
  // A read holding offsets from before a rewrite, after the old file was let go: asked again, it gets the new one's.
  if (!file.open) throw new UnavailableError('hot tier', `the hot-tier log ${path} was rewritten since this read began; retry`, 1, 'failed');
  const fd = file.fd;
  let pos = 0;
  for (let i = 0; i < n; i++) {
    let off = at[2 * i]!;
    const end = pos + at[2 * i + 1]!;
    while (pos < end) {
      const got = readSync(fd, out, pos, end - pos, off);
      // The bytes were written and applied before anything pointed here: short means the file was cut.
      if (got <= 0) throw new UnavailableError('hot tier', `reading the hot-tier log ${path}: ${end - pos} bytes missing at ${off}`, 5, 'failed');
      pos += got;
      off += got;
    }
  }
  return out;
}

function splitShardKey(k: string): [string, string] {
  const i = k.lastIndexOf('/');
  return [k.slice(0, i), k.slice(i + 1)];
}

/** A failed disk operation, as the 503 it is for the caller: full disks say so. */
function unavailable(e: unknown, doing: string): UnavailableError {
  const code = (e as { code?: string }).code;
  if (code === 'ENOSPC' || code === 'EDQUOT') return new UnavailableError('hot tier', `${doing}: the data volume is full (${code}); free space or flush`, 30, 'full');
  return new UnavailableError('hot tier', `${doing}: ${code ?? (e as Error).message}`, 5, 'failed');
}
