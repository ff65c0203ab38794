import { mkdirSync, openSync, fstatSync, readSync, fsyncSync, closeSync, ftruncateSync } from 'node:fs';
import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import {
  bulkTurn,
  LeaseLostError,
  UnavailableError,
  type HotAppend,
  type HotCursor,
  type HotLog,
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
import { BlockPool, NO_BLOCK, type BlockLog } from './blocks.js';

/**
 * A series, held once however many windows hold a log of it (the logs point here), with its
 * metric and tag values interned: at a million active series the keys, not the samples, are most
 * of the memory (a JSON copy of the key per log, a fresh string per repeated tag value).
 */
interface Series {
  readonly id: string;
  readonly key: SeriesKey;
  /** Logs (one per window) pointing here; the entry goes when the last is released. */
  logs: number;
}

/**
 * One series' bytes in one window: a chain of blocks in its shard-window's pool (`pool`, and the
 * BlockLog fields); or, for a log whose first append was large (records), where its bytes are in
 * the log file (`disk`, `pool` null), read back when the window is read.
 */
interface Log extends BlockLog {
  readonly series: Series;
  /** Replaced when the log rewrite moves a wasteful pool's live logs to a fresh one. */
  pool: BlockPool | null;
  disk: Spans | null;
  /** Dropped from its window (released whole): an append must find or make the window's log again. */
  released: boolean;
  /** The KeyAppends that points here last: let go of it on release, so no released log is held for a series that stopped writing. */
  owner: KeyAppends | null;
}

/**
 * What the append path keeps per series key object (the write path hands the same object for a
 * series on every request): its appends' series part as logged (walSeriesBytes), and the log its
 * last append went to, so the next append to the same shard and window finds it without two map
 * lookups. Held as long as that key object (the write path's bounded identity cache).
 */
interface KeyAppends {
  readonly bytes: Uint8Array;
  state: ShardState | null;
  /** The window of `log` in hours since the epoch (hourOf), a small integer: its start in ms would be a heap number per series. */
  hour: number;
  log: Log | null;
}

/** A window start as KeyAppends holds it: hours since the epoch, or -1 (matching no window) for a start not on an hour. */
function hourOf(window: number): number {
  const h = window / WINDOW_MS;
  return Number.isInteger(h) && h >= 0 && h < 2 ** 30 ? h | 0 : -1;
}

/**
 * A log's bytes in the log file: `at[2i]` the offset of piece i, `at[2i + 1]` its length, in the
 * log's order. The file already holds every appended byte; keeping a copy in process memory as
 * well made the hot tier of a records load hundreds of MB of the process (the page cache holds
 * what is read back, and the kernel can drop it).
 */
interface Spans {
  at: Float64Array;
  n: number;
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
  generation: number;
  fence: number;
  lease: { owner: string; fence: number; expiresAt: number } | null;
  windows: Map<number, Map<string, Log>>;
  /**
   * The same logs by window and metric: a scan (a query) visits the logs of its metric only. Every
   * series of the shard was ~20 ms per single-series query at 60,000 series, on the HTTP thread.
   */
  metrics: Map<number, Map<string, Set<Log>>>;
  /** Each window's pool of in-memory log bytes (blocks.ts): dropped with the window. */
  pools: Map<number, BlockPool>;
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
  /** Every series with a log in some window, by id (ids are per namespace-independent hashes; the key disambiguates nothing more). */
  private readonly series = new Map<string, Series>();
  /**
   * Per series key object, its id and key JSON as its appends are logged and its last log
   * (KeyAppends): a series written every scrape encodes them once. ~200 bytes a series, for as
   * long as the write path's bounded identity cache holds its key.
   */
  private readonly keyAppends = new WeakMap<SeriesKey, KeyAppends>();
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
      s = { generation: 0, fence: 0, lease: null, windows: new Map(), metrics: new Map(), pools: new Map() };
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
    const log = w?.get(id);
    if (!w || !log) return;
    if (length >= log.length) {
      w.delete(id);
      unindex(s, window, log);
      log.released = true;
      if (log.owner?.log === log) log.owner.log = null;
      this.liveBytes -= log.length;
      this.releasedBytes += log.length;
      log.pool?.clear(log);
      if (--log.series.logs === 0) this.series.delete(log.series.id);
    } else if (log.disk) {
      dropHead(log.disk, length);
      this.liveBytes -= length;
      this.releasedBytes += length;
      log.length -= length;
    } else {
      log.pool!.dropHead(log, length);
      this.liveBytes -= length;
      this.releasedBytes += length;
    }
    if (w.size === 0) {
      s.windows.delete(window);
      s.pools.delete(window);
    }
  }

  /** `data` appended to the log of `id` in `window`; `at`: where `data` is in the log file. `key`: the series key, or its JSON as logged. */
  private applyAppend(s: ShardState, window: number, id: string, key: string | SeriesKey, data: Uint8Array, at: number): Log {
    let w = s.windows.get(window);
    if (!w) s.windows.set(window, (w = new Map()));
    let log = w.get(id);
    if (!log) {
      const series = this.seriesOf(id, key);
      series.logs++;
      const disk = data.length >= this.diskMin ? { at: new Float64Array(8), n: 0 } : null;
      let pool: BlockPool | null = null;
      if (!disk) {
        pool = s.pools.get(window) ?? null;
        if (!pool) s.pools.set(window, (pool = new BlockPool()));
      }
      w.set(series.id, (log = { series, pool, head: NO_BLOCK, tail: NO_BLOCK, start: 0, length: 0, disk, released: false, owner: null }));
      index(s, window, log);
    }
    this.appendLog(log, data, at);
    return log;
  }

  /** `data` appended to `log`; `at`: where `data` is in the log file. */
  private appendLog(log: Log, data: Uint8Array, at: number): void {
    if (log.disk) {
      addSpan(log.disk, at, data.length);
      log.length += data.length;
    } else log.pool!.append(log, data);
    this.liveBytes += data.length;
  }

  /**
   * The series of `id`, made the first time: the write path's key object itself when its strings
   * are interned (internName; the scan path's keys are), else one parsed from its JSON with its
   * strings interned (a key replayed from the log, or one a request built). The id is the
   * caller's string, not interned: ids are unique, and would only fill the pool.
   */
  private seriesOf(id: string, key: string | SeriesKey): Series {
    let s = this.series.get(id);
    if (s) return s;
    if (typeof key !== 'string' && isInterned(key)) s = { id, key, logs: 0 };
    else {
      // The parsed object itself (its values interned in place): JSON.parse builds compact objects,
      // where a prototype-less copy would be a dictionary several times the size. Readers look tags
      // up as own properties, and the validator refuses `__proto__`.
      const parsed = JSON.parse(typeof key === 'string' ? key : keyText(key)) as { metric: string; tags: Record<string, string> };
      for (const k of Object.keys(parsed.tags)) parsed.tags[k] = internName(parsed.tags[k]!);
      s = { id, key: { metric: internName(parsed.metric), tags: parsed.tags }, logs: 0 };
    }
    this.series.set(id, s);
    return s;
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
    const series = new Array<Uint8Array>(to - from);
    const keys = new Array<KeyAppends>(to - from);
    for (let i = from; i < to; i++) {
      const e = entries[i]!;
      let k = this.keyAppends.get(e.key);
      if (k === undefined) this.keyAppends.set(e.key, (k = { bytes: walSeriesBytes(e.id, keyText(e.key)), state: null, hour: -1, log: null }));
      series[i - from] = k.bytes;
      keys[i - from] = k;
    }
    const dataAt = new Uint32Array(to - from);
    const buf = encodeHotAppends(entries, from, to, series, dataAt);
    return this.enqueue(buf, (fileAt) => {
      // Appends of one request share a ShardRef per shard: its state looked up once, not by a `ns/shard` string per append.
      const states = new Map<ShardRef, ShardState>();
      for (let i = from; i < to; i++) {
        const e = entries[i]!;
        let s = states.get(e.ref);
        if (!s) states.set(e.ref, (s = this.shard(e.ref)));
        const k = keys[i - from]!;
        const { log } = k;
        if (log !== null && k.state === s && k.hour === e.window / WINDOW_MS && !log.released) this.appendLog(log, e.data, fileAt + dataAt[i - from]!);
        else {
          const found = this.applyAppend(s, e.window, e.id, e.key, e.data, fileAt + dataAt[i - from]!);
          // The series keeps the key object it was made with; when another one now writes it (the write path's
          // cache let the first go), that first one's entry would live as long as the series, for nothing.
          const kept = found.series.key;
          if (kept !== e.key) this.keyAppends.delete(kept);
          found.owner = k;
          k.log = found;
          k.state = s;
          k.hour = hourOf(e.window);
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
  private async writeAll(bufs: readonly Buffer[]): Promise<number> {
    let total = 0;
    for (const b of bufs) total += b.length;
    let done = bufs.length > 1 ? (await this.file.writev(bufs)).bytesWritten : 0;
    for (const buf of bufs) {
      if (done >= buf.length) {
        done -= buf.length;
        continue;
      }
      let at = done;
      done = 0;
      while (at < buf.length) {
        const { bytesWritten } = await this.file.write(buf, at, buf.length - at);
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
    const moved: (Log | number)[] = [];
    const out = await open(tmp, 'w');
    let bytes = 0;
    try {
      // Batched writes, and an await between them: a rewrite of a large log must not hold the
      // event loop (commits wait in `pending` meanwhile, and nothing else changes the state).
      let chunk: Buffer[] = [];
      let chunkBytes = 0;
      const flushChunk = async () => {
        const buf = Buffer.concat(chunk);
        let done = 0;
        while (done < buf.length) done += (await out.write(buf, done, buf.length - done)).bytesWritten;
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
      let batchLogs: Log[] = [];
      let batchBytes = 0;
      const putBatch = (): boolean => {
        const at: number[] = [];
        const b = encodeWalRecordAt({ type: 'appends', entries: batch }, at);
        // A log kept on disk is one piece of the new file: its append's data.
        for (let i = 0; i < batchLogs.length; i++) if (batchLogs[i]!.disk) moved.push(batchLogs[i]!, bytes + at[i]!);
        batch = [];
        batchLogs = [];
        batchBytes = 0;
        return put(b);
      };
      for (const [k, s] of this.shards) {
        const [ns, shardText] = splitShardKey(k);
        const shard = Number(shardText);
        put(encodeWalRecord({ type: 'generation', ns, shard, value: s.generation }));
        if (put(encodeWalRecord({ type: 'fence', ns, shard, value: s.fence }))) await flushChunk();
        for (const [window, logs] of s.windows)
          for (const [id, log] of logs) {
            const data = this.bytesOf(log);
            const key = keyText(log.series.key);
            batch.push({ ns, shard, window, id, key, data });
            batchLogs.push(log);
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
    for (let i = 0; i < moved.length; i += 2) {
      const log = moved[i] as Log;
      log.disk = { at: Float64Array.of(moved[i + 1] as number, log.length, 0, 0), n: 1 };
    }
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
    for (const s of this.shards.values())
      for (const [window, pool] of s.pools) {
        if (!pool.wasteful) continue;
        const fresh = new BlockPool();
        for (const log of s.windows.get(window)?.values() ?? []) {
          if (log.pool !== pool) continue;
          const bytes = pool.read(log.head, log.start, log.length);
          log.head = log.tail = NO_BLOCK;
          log.start = log.length = 0;
          fresh.append(log, bytes);
          log.pool = fresh;
        }
        s.pools.set(window, fresh);
      }
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
      commits.push(this.commitAppends(entries, i, Math.min(entries.length, i + COMMIT_APPENDS)));
    }
    // Every commit is awaited, so a failure of one is not left unhandled while another is pending.
    const failed = (await Promise.allSettled(commits)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }


  async openWindows(ref: ShardRef): Promise<number[]> {
    return [...this.shard(ref).windows.keys()].sort((a, b) => a - b);
  }

  async readWindow(ref: ShardRef, window: number): Promise<HotLog[]> {
    const logs = this.shard(ref).windows.get(window);
    if (!logs) return [];
    // The logs as they are now (id and log pairs: a later append or release changes neither the
    // bytes already there nor these), each read into a plain HotLog now, since a flush takes every
    // byte: no lazy getter and its closures per log (a window of a shard at a million series is
    // ~60,000 logs, all of it garbage for the HTTP thread's collector once sent). The event loop
    // gets a turn between logs once a slice has run: a window of a busy shard is tens of MB.
    const now = [...logs];
    const out = new Array<HotLog>(now.length);
    let since = performance.now();
    for (let i = 0; i < now.length; i++) {
      if ((i & 255) === 255 && performance.now() - since >= APPLY_SLICE_MS) {
        await bulkTurn();
        since = performance.now();
      }
      const [id, log] = now[i]!;
      out[i] = { id, key: log.series.key, window, data: this.readNow(log) };
    }
    return out;
  }

  /** A log's bytes now (its pool's blocks are never written again once released; a file the rewrite replaced stays open for a while). */
  private readNow(log: Log): Uint8Array {
    return log.disk ? readSpans(this.reader, log.disk.at.slice(0, 2 * log.disk.n), log.disk.n, log.length, this.path) : log.pool!.read(log.head, log.start, log.length);
  }

  /**
   * A log as it is now, its bytes read when `data` is first asked for (a query decodes only the
   * series its selector matches), from where they are now: appends and releases never change
   * bytes already in a block pool or in the file, and a rewrite leaves the old file open for a
   * while (and an old pool to the reads that hold it).
   */
  private hotLog(id: string, window: number, log: Log): HotLog {
    let read: () => Uint8Array;
    if (!log.disk) {
      // Blocks are not written again once released (blocks.ts), so the bytes as of now stay readable.
      const { pool, head, start, length } = log;
      read = () => pool!.read(head, start, length);
    } else {
      const file = this.reader;
      const at = log.disk.at.slice(0, 2 * log.disk.n);
      const { n } = log.disk;
      const length = log.length;
      const path = this.path;
      read = () => readSpans(file, at, n, length, path);
    }
    let data: Uint8Array | undefined;
    return {
      id,
      key: log.series.key,
      window,
      get data() {
        return (data ??= read());
      },
    };
  }

  /** A log's bytes now, from memory or read from the file (for a rewrite, which owns the state meanwhile). */
  private bytesOf(log: Log): Uint8Array {
    return log.disk ? readSpans(this.reader, log.disk.at, log.disk.n, log.length, this.path) : log.pool!.read(log.head, log.start, log.length);
  }

  private retire(file: LogFile): void {
    if (!this.retired.delete(file)) return;
    file.open = false;
    closeSync(file.fd);
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
    for (const [window, byMetric] of s.metrics) {
      if (window + WINDOW_MS <= from || window >= to) continue;
      const of = byMetric.get(metric);
      if (of) for (const log of of) if (!pick || selects(pick, log.series.key.tags)) logs.push(this.hotLog(log.series.id, window, log));
    }
    return { generation: s.generation, logs };
  }

  async seriesIn(ref: ShardRef, metric: string | undefined, from: number, to: number): Promise<SeriesKey[]> {
    const out = new Map<string, SeriesKey>();
    const s = this.shard(ref);
    for (const [window, byMetric] of s.metrics) {
      if (window + WINDOW_MS <= from || window >= to) continue;
      for (const [m, logs] of byMetric) if (metric === undefined || m === metric) for (const log of logs) out.set(log.series.id, log.series.key);
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
      for (const log of w.values()) bytes += log.length;
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

/** `log` (new in `window`) in its shard's metric index. */
function index(s: ShardState, window: number, log: Log): void {
  let byMetric = s.metrics.get(window);
  if (!byMetric) s.metrics.set(window, (byMetric = new Map()));
  const metric = log.series.key.metric;
  let logs = byMetric.get(metric);
  if (!logs) byMetric.set(metric, (logs = new Set()));
  logs.add(log);
}

/** `log` (released whole from `window`) out of its shard's metric index. */
function unindex(s: ShardState, window: number, log: Log): void {
  const byMetric = s.metrics.get(window);
  const logs = byMetric?.get(log.series.key.metric);
  if (!byMetric || !logs) return;
  logs.delete(log);
  if (logs.size === 0) byMetric.delete(log.series.key.metric);
  if (byMetric.size === 0) s.metrics.delete(window);
}

/** How long a file replaced by a rewrite stays open for reads that took their offsets in it (a query's lazy reads, a flush). */
const REWRITTEN_READ_MS = 60_000;

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
function readSpans(file: LogFile, at: Float64Array, n: number, length: number, path: string): Uint8Array {
  // A read holding offsets from before a rewrite, after the old file was let go: asked again, it gets the new one's.
  if (!file.open) throw new UnavailableError('hot tier', `the hot-tier log ${path} was rewritten since this read began; retry`, 1, 'failed');
  const fd = file.fd;
  const out = new Uint8Array(length);
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
