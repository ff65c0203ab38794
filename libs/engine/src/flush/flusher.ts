import { LeaseLostError, PreconditionFailedError, WINDOW_MS, allShards, segmentKey, type Clock, type FieldValue, type HotLog, type HotTier, type Lease, type ObjectStore, type SeriesColumns, type ShardRef } from '@s4/core';
import { decodeRecordsToEncode, encodeSegment, type SegmentSeriesInput } from '@s4/format';
import { CatalogStore, entryOf, nextPart } from '../catalog/catalog-store.js';
import { isSortedUnique, mergeSources } from '../columns/merge.js';
import { mapLimit } from '../concurrency.js';
import { addCounts } from '../counts.js';

export interface FlusherOptions {
  readonly ns: string;
  readonly shards: number;
  /** Identifies this process in leases. */
  readonly owner: string;
  readonly leaseTtlMs: number;
  readonly clock: Clock;
  /** Shards flushed at once. */
  readonly concurrency?: number;
  /**
   * Least time between two periodic flushes of one closed window (S4_FLUSH_LATE_MS; 0: every
   * pass). Late samples into a window this flusher flushed less than this ago wait in the hot
   * tier, unless the shard holds enough of them to be worth a part now (see `LATE_LOG_BYTES`).
   */
  readonly lateMs?: number;
}

/** Which windows a pass flushes: 'periodic' lets late data wait (FlusherOptions.lateMs); 'all' flushes every closed window now. */
export type FlushMode = 'periodic' | 'all';

export interface FlushStats {
  objects: number;
  series: number;
  samples: number;
  bytes: number;
  /** Bytes of hot-tier logs flushed (and released): what the pass took out of the hot tier's memory. */
  hotBytes: number;
  /** Shards with closed windows that another owner's lease kept this pass from flushing. */
  busyShards: number;
}

/** Series logs released per hot-tier call. */
const RELEASE_SLICE = 500;

/**
 * A flush costs tens of µs of CPU per series whatever its size (blocks, frames, footer entries),
 * and every part is one more object to fold. Late data that averages this many bytes a series log
 * (~20 float samples, or one record) pays for that, so it never waits for `lateMs`.
 */
export const LATE_LOG_BYTES = 256;
/** Unflushed bytes of a shard above which late data never waits: a bound on what waiting holds in memory. */
export const LATE_SHARD_BYTES = 8 * 1024 * 1024;

/**
 * The segment worker's core: turns closed hot windows into immutable segment parts.
 *
 * Per window, in this order: upload the part (its key carries the lease's fence), register it in
 * the catalog (compare-and-swap), bump the shard's generation, release the flushed bytes from the
 * hot tier. A crash between any two steps leaves every sample readable from the hot tier, the
 * object store or both; a retry flushes what is still hot again, and readers de-duplicate.
 */
export class Flusher {
  /** Flushes in progress in this process, per shard: the worker and an admin flush must not overlap. */
  private readonly running = new Map<string, Promise<FlushStats>>();
  /**
   * When this flusher last flushed each window, per `ns/shard/window`, kept for `lateMs` (a window
   * whose data was all flushed closes, and reopens when the next late sample arrives). Another
   * process's flushes are not seen: at worst a window is flushed one pass early, as before.
   */
  private readonly flushedAt = new Map<string, number>();

  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly catalogs: CatalogStore,
    private readonly options: FlusherOptions,
  ) {}

  /** Flush every window of every shard that ends at or before `cutoff` ('periodic': but the late data that may wait). */
  async flushAll(cutoff: number, mode: FlushMode = 'all'): Promise<FlushStats> {
    const total: FlushStats = { objects: 0, series: 0, samples: 0, bytes: 0, hotBytes: 0, busyShards: 0 };
    this.forget();
    const results = await mapLimit(allShards(this.options.shards), this.options.concurrency ?? 4, (shard) =>
      this.flushShard({ ns: this.options.ns, shard }, cutoff, mode),
    );
    for (const r of results) addCounts(total, r);
    return total;
  }

  /**
   * Flush one shard. The lease keeps other processes out; within this process a second caller
   * waits for the running flush and then flushes what is left, because the same owner gets the
   * same lease back and two flushes of one window would write the same part key.
   */
  async flushShard(ref: ShardRef, cutoff: number, mode: FlushMode = 'all'): Promise<FlushStats> {
    const k = `${ref.ns}/${ref.shard}`;
    for (let busy = this.running.get(k); busy; busy = this.running.get(k)) await busy.catch(() => undefined);
    const run = this.flushShardNow(ref, cutoff, mode).finally(() => this.running.delete(k));
    this.running.set(k, run);
    return run;
  }

  private async flushShardNow(ref: ShardRef, cutoff: number, mode: FlushMode): Promise<FlushStats> {
    const stats: FlushStats = { objects: 0, series: 0, samples: 0, bytes: 0, hotBytes: 0, busyShards: 0 };
    let windows = (await this.hot.openWindows(ref)).filter((w) => w + WINDOW_MS <= cutoff);
    if (mode === 'periodic') windows = await this.due(ref, windows);
    if (windows.length === 0) return stats;
    const lease = await this.hot.acquireLease(ref, this.options.owner, this.options.leaseTtlMs);
    if (!lease) return { ...stats, busyShards: 1 }; // another worker owns this shard now
    // Renewed in the background as well as between windows, so the TTL can be short (a crashed
    // owner's shards wait only that long) while one large window takes longer than the TTL.
    let lost = false;
    const renewal = setInterval(() => {
      this.hot.renewLease(lease, this.options.leaseTtlMs).then(
        (held) => (lost ||= !held),
        () => undefined, // the check between windows decides; a failed renewal is retried next tick
      );
    }, Math.max(100, Math.floor(this.options.leaseTtlMs / 3)));
    renewal.unref();
    try {
      for (const window of windows) {
        if (lost || !(await this.hot.renewLease(lease, this.options.leaseTtlMs))) throw new LeaseLostError(`${ref.ns}/${ref.shard}`, lease.fence);
        addCounts(stats, await this.flushWindow(lease, window));
        // Only kept when late data may wait (lateMs > 0, off by default): nothing reads it otherwise.
        if ((this.options.lateMs ?? 0) > 0) this.flushedAt.set(`${ref.ns}/${ref.shard}/${window}`, this.options.clock.now());
      }
    } catch (e) {
      // Another owner took the shard (our lease ran out and it moved the fence): what this pass
      // left hot, that owner or the next pass flushes. Counted as busy, as the compactor does.
      if (!(e instanceof LeaseLostError)) throw e;
      stats.busyShards++;
    } finally {
      clearInterval(renewal);
      await this.hot.releaseLease(lease);
    }
    return stats;
  }

  /**
   * The closed windows a periodic pass flushes: all but those this flusher flushed less than
   * `lateMs` ago, which wait unless the shard's unflushed logs are large enough to be worth a part
   * (on average `LATE_LOG_BYTES` a log, or `LATE_SHARD_BYTES` in all). Without this, a million
   * series each sending a late sample every scrape cost a flush of a million series every pass.
   */
  private async due(ref: ShardRef, windows: number[]): Promise<number[]> {
    const lateMs = this.options.lateMs ?? 0;
    if (lateMs <= 0) return windows;
    const now = this.options.clock.now();
    const recent = (w: number) => {
      const at = this.flushedAt.get(`${ref.ns}/${ref.shard}/${w}`);
      return at !== undefined && now - at < lateMs;
    };
    if (!windows.some(recent)) return windows;
    const held = await this.hot.shardStats(ref);
    if (held.bytes >= LATE_SHARD_BYTES || held.bytes >= LATE_LOG_BYTES * held.logs) return windows;
    return windows.filter((w) => !recent(w));
  }

  /** Drops the flush times that no longer hold a window back. */
  private forget(): void {
    const lateMs = this.options.lateMs ?? 0;
    const now = this.options.clock.now();
    for (const [k, at] of this.flushedAt) if (now - at >= lateMs) this.flushedAt.delete(k);
  }

  private async flushWindow(lease: Lease, window: number): Promise<FlushStats> {
    const ref = lease.ref;
    const logs = (await this.hot.readWindow(ref, window)).filter((l) => l.data.length > 0);
    if (logs.length === 0) return { objects: 0, series: 0, samples: 0, bytes: 0, hotBytes: 0, busyShards: 0 };
    const decoded = new WindowSeries(logs);
    const series = decoded.series;
    const { catalog } = await this.catalogs.load(ref, window);
    const bytes = encodeSegment({ ns: ref.ns, shard: ref.shard, window, series });
    const span = decoded.span();
    // Create-only: an earlier attempt of this flush (same fence, same next part) may have timed
    // out yet still land later; unconditional, its older bytes could replace a registered part.
    // Taken keys are skipped (an orphan there is the sweeper's).
    let part = nextPart(catalog, window);
    let key = segmentKey(ref, window, part, lease.fence);
    for (let attempt = 0; ; attempt++) {
      try {
        await this.objects.put(key, bytes, { ifNoneMatch: '*' });
        break;
      } catch (e) {
        if (!(e instanceof PreconditionFailedError) || attempt >= 100) throw e;
        key = segmentKey(ref, window, ++part, lease.fence);
      }
    }

    await this.catalogs.add(ref, entryOf(key, bytes, { window, part, fence: lease.fence, series, ...span, createdAt: this.options.clock.now() }));
    await this.hot.bumpGeneration(lease);
    // In slices: each release is one hot-tier call (a Lua script in Redis, a logged commit applied
    // on the HTTP thread in embedded mode), so a window of 100,000 series never holds either for
    // long. A crash between slices leaves the rest hot; the next flush writes it again (readers
    // de-duplicate).
    for (let i = 0; i < logs.length; i += RELEASE_SLICE)
      await this.hot.release(lease, window, logs.slice(i, i + RELEASE_SLICE).map((l) => ({ id: l.id, length: l.data.length })));
    let hotBytes = 0;
    for (const l of logs) hotBytes += l.data.length;
    return { objects: 1, series: series.length, samples: span.samples, bytes: bytes.length, hotBytes, busyShards: 0 };
  }
}

/**
 * The window's series for encodeSegment, decoded one at a time. The encoder takes every series of
 * the window up front but reads each one's columns once, in id order, so decoding on access keeps
 * a single series' columns alive instead of the window's: decoded values are several times their
 * log bytes (nested records ~5×, floats ~3×), and a window of a busy shard holds hundreds of MB
 * of log bytes. The last series decoded is kept (the encoder reads `ts`, then `fields`); of the
 * others only what the catalog entry needs (count, first and last timestamp).
 */
class WindowSeries {
  readonly series: LazySeries[];
  private last: { series: LazySeries; columns: SeriesColumns } | null = null;

  constructor(logs: readonly HotLog[]) {
    this.series = logs.map((log) => new LazySeries(log, this)).sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  /** Samples and time range of the window (catalog entry), from what encoding decoded; call it after encoding. */
  span(): { samples: number; minTs: number; maxTs: number } {
    this.last = null;
    let samples = 0;
    let minTs = Infinity;
    let maxTs = -Infinity;
    for (const s of this.series) {
      if (s.samples < 0) this.decode(s);
      if (s.samples === 0) continue;
      samples += s.samples;
      minTs = Math.min(minTs, s.minTs);
      maxTs = Math.max(maxTs, s.maxTs);
    }
    return { samples, minTs, maxTs };
  }

  decode(series: LazySeries): SeriesColumns {
    if (this.last?.series === series) return this.last.columns;
    // Nested values stay packed until the encoder shreds them (decodeRecordsToEncode).
    const data = decodeRecordsToEncode(series.log.data);
    const columns = mergeSources([{ data, sortedUnique: isSortedUnique(data) }]);
    this.last = { series, columns };
    const n = columns.ts.length;
    series.samples = n;
    series.minTs = n > 0 ? columns.ts[0]! : 0;
    series.maxTs = n > 0 ? columns.ts[n - 1]! : 0;
    return columns;
  }
}

/**
 * One series of a WindowSeries, its columns decoded when the encoder reads them. A class, not an
 * object literal with getters: each literal's getters are closures of their own, so every series
 * had a shape of its own and the sorts' `id` reads went megamorphic (seconds per flush at 100,000
 * series of a shard-window).
 */
class LazySeries implements SegmentSeriesInput {
  readonly id: string;
  readonly metric: string;
  readonly tags: Record<string, string>;
  /** What the catalog entry needs once the series was decoded (samples -1 before). */
  samples = -1;
  minTs = 0;
  maxTs = 0;

  constructor(
    readonly log: HotLog,
    private readonly window: WindowSeries,
  ) {
    this.id = log.id;
    this.metric = log.key.metric;
    this.tags = { ...log.key.tags };
  }

  get ts(): number[] {
    return this.window.decode(this).ts;
  }

  get fields(): Record<string, FieldValue[]> {
    return this.window.decode(this).fields;
  }
}
