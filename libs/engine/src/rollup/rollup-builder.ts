import {
  DAY_MS,
  WINDOW_MS,
  allShards,
  currentDayRollupKey,
  currentRollupKey,
  isDayRollupKey,
  rollupKeyDay,
  type Clock,
  type HotTier,
  type ObjectStore,
  type ShardRef,
} from '@s4/core';
import { decodeRollupObject, encodeRollupObject, type CatalogEntry, type RollupSeries } from '@s4/format';
import { entryOf, type CatalogStore } from '../catalog/catalog-store.js';
import { mergeSources, type Source } from '../columns/merge.js';
import { openWindow, type SegmentBytes } from '../compact/fold.js';
import { PendingDeletesStore, upsert } from '../compact/pending-deletes.js';
import { mapLimit } from '../concurrency.js';
import { bucketize, type Bucket } from './buckets.js';
import { MIN_REDUCTION, ROLLUP_RESOLUTIONS, pays, type Resolution } from './resolutions.js';

export interface RollupStats {
  objects: number;
  series: number;
  windows: number;
  /** Replaced rollup objects deleted after their grace period. */
  deleted: number;
}

export interface RollupBuilderOptions {
  readonly ns: string;
  readonly shards: number;
  readonly clock: Clock;
  /** Resolutions considered for each series (default 1 min and 1 h). */
  readonly resolutions?: readonly Resolution[];
  /** A resolution is stored where it cuts the numbers read at least this many times (default 4). */
  readonly minReduction?: number;
  /**
   * A day's hourly rollups are folded into one day object once the day ended this long ago
   * (default 3 h: after the compactor's day fold, 2 h by default, which changes every hourly
   * rollup key of the day; late data after that is rare and would only refold it).
   */
  readonly dayAfterMs?: number;
  /** Replaced rollup objects are deleted this long after they left the catalog (default 10 min). */
  readonly deleteGraceMs?: number;
}

export const ROLLUP_DEFAULTS = { dayAfterMs: 3 * 3_600_000, deleteGraceMs: 600_000 } as const;

interface RollupRows extends RollupSeries {
  /** Per resolution stored: per field, its buckets. */
  byRes: Map<string, Map<string, Bucket[]>>;
}

/**
 * The aggregation worker's core. For every hour window whose registered parts differ from the
 * ones its rollup was computed from, it reads the parts, merges them (newest wins), and stores
 * count/sum/min/max/first/last per numeric field at each resolution that pays for itself for
 * that series (rollup.md); once a day is closed its hourly rollups are folded into one day
 * object, and every object a newer one replaced is deleted after a grace period. Queries use a
 * rollup only when it matches the window's current parts, so late data never yields a stale
 * answer.
 */
export class RollupBuilder {
  private readonly pending: PendingDeletesStore;
  private readonly resolutions: readonly Resolution[];
  private readonly minReduction: number;
  private readonly dayAfterMs: number;
  private readonly deleteGraceMs: number;

  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly segments: CatalogStore,
    private readonly rollups: CatalogStore,
    private readonly options: RollupBuilderOptions,
  ) {
    this.pending = new PendingDeletesStore(objects, 'rollup');
    this.resolutions = [...(options.resolutions ?? ROLLUP_RESOLUTIONS)].sort((a, b) => a.ms - b.ms);
    this.minReduction = options.minReduction ?? MIN_REDUCTION;
    this.dayAfterMs = options.dayAfterMs ?? ROLLUP_DEFAULTS.dayAfterMs;
    this.deleteGraceMs = options.deleteGraceMs ?? ROLLUP_DEFAULTS.deleteGraceMs;
  }

  /** Roll up every stale window of every shard in days overlapping [from, to). */
  async rollupAll(from: number, to: number): Promise<RollupStats> {
    const per = await mapLimit(allShards(this.options.shards), 4, (shard) => this.rollupShard({ ns: this.options.ns, shard }, from, to));
    return per.reduce((a, b) => ({ objects: a.objects + b.objects, series: a.series + b.series, windows: a.windows + b.windows, deleted: a.deleted + b.deleted }), {
      objects: 0,
      series: 0,
      windows: 0,
      deleted: 0,
    });
  }

  async rollupShard(ref: ShardRef, from: number, to: number): Promise<RollupStats> {
    const stats: RollupStats = { objects: 0, series: 0, windows: 0, deleted: await this.collect(ref) };
    const generation = await this.hot.generation(ref);
    const now = this.options.clock.now();
    for (const day of await this.segments.days(ref, generation)) {
      if (day + DAY_MS <= from || day >= to) continue;
      const seg = await this.segments.read(ref, day, generation);
      const { catalog: done } = await this.rollups.load(ref, day);
      const have = new Set(done.entries.map((e) => e.key));
      const byWindow = new Map<number, CatalogEntry[]>();
      for (const e of seg.entries) {
        let list = byWindow.get(e.window);
        if (!list) byWindow.set(e.window, (list = []));
        list.push(e);
      }
      const hourly = [...byWindow].map(([window, parts]) => [window, currentRollupKey(ref, window, parts.map((p) => p.key))] as [number, string]);
      stats.windows += hourly.length;
      if (hourly.length === 0) continue;
      const dayKey = currentDayRollupKey(ref, day, hourly.map(([, k]) => k));
      const closed = day + DAY_MS + this.dayAfterMs <= now;
      // A closed day's object stands for every hour of it: their hourly objects may be gone.
      if (closed && have.has(dayKey)) continue;
      // A day object serves every window of its day: read and decode it once.
      const reads = new Map<string, Promise<SegmentBytes>>();
      for (const [window, key] of hourly) {
        if (have.has(key)) continue;
        stats.series += await this.rollupWindow(ref, window, byWindow.get(window)!, key, reads);
        stats.objects++;
      }
      if (closed) {
        await this.rollupDay(ref, day, hourly, dayKey);
        stats.objects++;
      }
    }
    return stats;
  }

  private async rollupWindow(ref: ShardRef, window: number, parts: CatalogEntry[], key: string, reads: Map<string, Promise<SegmentBytes>>): Promise<number> {
    // The parts are held as bytes and each series decoded when its turn comes, then dropped: a
    // window decoded whole held ~1 GB of record objects in this thread for the records bench.
    const sources = await openWindow(this.objects, parts, 1, reads);
    let count = 0;
    const series: RollupSeries[] = [];
    for (const { metric, tags, blocks } of sources.values()) {
      const list: Source[] = [];
      for (const b of blocks) {
        const data = b.part.numbers(b.entry);
        // A day object's series may have no sample in this window once clipped.
        if (data.ts.length > 0) list.push({ data, sortedUnique: true });
      }
      if (list.length === 0) continue;
      count++;
      const merged = mergeSources(list);
      const rows: RollupRows = { metric, tags: { ...tags }, byRes: new Map() };
      let numbers = 0;
      for (const res of this.resolutions) {
        const byField = new Map<string, Bucket[]>();
        let buckets = 0;
        numbers = 0;
        for (const [field, col] of Object.entries(merged.fields)) {
          const list = bucketize(merged.ts, col, res.ms);
          if (list.length === 0) continue;
          byField.set(field, list);
          buckets += list.length;
          for (const b of list) numbers += b.count;
        }
        if (pays(numbers, buckets, this.minReduction)) rows.byRes.set(res.name, byField);
      }
      if (numbers > 0) series.push(rows);
    }
    await this.store(ref, key, window, WINDOW_MS, series, (e) => e.window === window && !isDayRollupKey(e.key));
    return count;
  }

  /**
   * Fold a closed day's hourly rollups into one object per (shard, day). A series keeps a
   * resolution in the day object only if every hourly object that has the series stored it, so
   * a reader that finds the resolution there finds the whole day in it.
   */
  private async rollupDay(ref: ShardRef, day: number, hourly: [number, string][], key: string): Promise<void> {
    const rows = new Map<string, RollupRows & { hours: number; counts: Map<string, number> }>();
    for (const [, hourKey] of [...hourly].sort(([a], [b]) => a - b)) {
      const got = await this.objects.get(hourKey);
      if (!got || got.notModified) throw new Error(`rollup ${hourKey} is registered but missing`);
      // Hourly objects of any column version (a day may mix objects written before and after 3).
      for (const [id, s] of decodeRollupObject(got.body).series) {
        let r = rows.get(id);
        if (!r) rows.set(id, (r = { metric: s.metric, tags: { ...s.tags }, byRes: new Map<string, Map<string, Bucket[]>>(), hours: 0, counts: new Map<string, number>() }));
        r.hours++;
        for (const [resolution, fields] of s.byRes) {
          r.counts.set(resolution, (r.counts.get(resolution) ?? 0) + 1);
          let byField = r.byRes.get(resolution);
          if (!byField) r.byRes.set(resolution, (byField = new Map<string, Bucket[]>()));
          for (const [field, list] of fields) {
            const dst = byField.get(field);
            if (dst) dst.push(...list);
            else byField.set(field, [...list]);
          }
        }
      }
    }
    for (const r of rows.values()) for (const res of [...r.byRes.keys()]) if (r.counts.get(res) !== r.hours) r.byRes.delete(res);
    await this.store(ref, key, day, DAY_MS, [...rows.values()], () => true);
  }

  /**
   * Write a rollup object covering [start, start + span) and register it in place of the entries
   * `replaces` picks in its day's catalog; those objects are deleted after the grace period.
   */
  private async store(ref: ShardRef, key: string, start: number, span: number, series: readonly RollupSeries[], replaces: (e: CatalogEntry) => boolean): Promise<void> {
    const { bytes, entries, rows: samples } = encodeRollupObject({ ns: ref.ns, shard: ref.shard, window: start, series });
    await this.objects.put(key, bytes);
    const entry = entryOf(key, bytes, { window: start, part: 0, fence: 0, series: entries, samples, minTs: start, maxTs: start + span - 1, createdAt: this.options.clock.now() });
    const day = Math.floor(start / DAY_MS) * DAY_MS;
    let replaced: string[] = [];
    await this.rollups.update(ref, day, (current) => {
      const gone = current.entries.filter((e) => e.key !== key && replaces(e));
      replaced = gone.map((e) => e.key);
      const kept = current.entries.filter((e) => e.key !== key && !replaces(e));
      return { ...current, entries: [...kept, entry] };
    });
    if (replaced.length > 0) {
      // Readers revalidate rollup catalogs every few seconds (planner.ts); the grace covers that and their reads.
      const deadline = this.options.clock.now() + this.deleteGraceMs;
      await this.pending.update(ref, (list) => upsert(list, replaced, deadline));
    }
  }

  /**
   * Delete replaced rollup objects whose grace has passed, unless a catalog names them again
   * (a concurrent builder registering the same content-addressed key). Returns how many.
   */
  private async collect(ref: ShardRef): Promise<number> {
    const now = this.options.clock.now();
    const due = (await this.pending.read(ref)).filter((p) => p.deleteAfter !== null && p.deleteAfter <= now);
    if (due.length === 0) return 0;
    const named = new Map<number, Set<string>>();
    const remove: string[] = [];
    for (const p of due) {
      const day = rollupKeyDay(p.key);
      if (day !== null) {
        let keys = named.get(day);
        if (!keys) named.set(day, (keys = new Set((await this.rollups.load(ref, day)).catalog.entries.map((e) => e.key))));
        if (keys.has(p.key)) continue;
      }
      remove.push(p.key);
    }
    if (remove.length > 0) await this.objects.delete(remove);
    const settled = new Set(due.map((p) => p.key));
    await this.pending.update(ref, (list) => list.filter((p) => !(settled.has(p.key) && p.deleteAfter !== null && p.deleteAfter <= now)));
    return remove.length;
  }
}
