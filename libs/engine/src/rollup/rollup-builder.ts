import {
  DAY_MS,
  WINDOW_MS,
  allShards,
  currentDayRollupKey,
  currentRollupKey,
  isDayRollupKey,
  type Clock,
  type FieldValue,
  type HotTier,
  type ObjectStore,
  type ShardRef,
} from '@s4/core';
import { decodeSegment, encodeSegment, type CatalogEntry, type SegmentSeriesInput } from '@s4/format';
import { entryOf, type CatalogStore } from '../catalog/catalog-store.js';
import { mergeSources, type Source } from '../columns/merge.js';
import { mapLimit } from '../concurrency.js';
import { bucketize, bucketsToColumns, type Bucket } from './buckets.js';
import { DAY_ROLLUP_RESOLUTION, ROLLUP_RESOLUTIONS, rollupSeriesId } from './resolutions.js';

export interface RollupStats {
  objects: number;
  series: number;
  windows: number;
}

export interface RollupBuilderOptions {
  readonly ns: string;
  readonly shards: number;
  readonly clock: Clock;
}

/**
 * The aggregation worker's core. For every hour window whose registered parts differ from the
 * ones its rollup was computed from, it reads the parts, merges them (newest wins), computes
 * count/sum/min/max/first/last per numeric field at each resolution, writes one rollup object
 * per (shard, window) and registers it, replacing the stale one. Queries use a rollup only
 * when it matches the window's current parts, so late data never yields a stale answer.
 */
export class RollupBuilder {
  constructor(
    private readonly hot: HotTier,
    private readonly objects: ObjectStore,
    private readonly segments: CatalogStore,
    private readonly rollups: CatalogStore,
    private readonly options: RollupBuilderOptions,
  ) {}

  /** Roll up every stale window of every shard in days overlapping [from, to). */
  async rollupAll(from: number, to: number): Promise<RollupStats> {
    const per = await mapLimit(allShards(this.options.shards), 4, (shard) => this.rollupShard({ ns: this.options.ns, shard }, from, to));
    return per.reduce((a, b) => ({ objects: a.objects + b.objects, series: a.series + b.series, windows: a.windows + b.windows }), { objects: 0, series: 0, windows: 0 });
  }

  async rollupShard(ref: ShardRef, from: number, to: number): Promise<RollupStats> {
    const stats: RollupStats = { objects: 0, series: 0, windows: 0 };
    const generation = await this.hot.generation(ref);
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
      const hourly: [number, string][] = [];
      for (const [window, parts] of byWindow) {
        stats.windows++;
        const key = currentRollupKey(ref, window, parts.map((p) => p.key));
        hourly.push([window, key]);
        if (have.has(key)) continue;
        stats.series += await this.rollupWindow(ref, window, parts, key);
        stats.objects++;
      }
      const dayKey = currentDayRollupKey(ref, day, hourly.map(([, k]) => k));
      if (hourly.length > 0 && !have.has(dayKey)) {
        await this.rollupDay(ref, day, hourly, dayKey);
        stats.objects++;
      }
    }
    return stats;
  }

  private async rollupWindow(ref: ShardRef, window: number, parts: CatalogEntry[], key: string): Promise<number> {
    const ordered = [...parts].sort((a, b) => a.fence - b.fence || a.part - b.part);
    const sources = new Map<string, { metric: string; tags: Record<string, string>; list: Source[] }>();
    for (const part of ordered) {
      const got = await this.objects.get(part.key);
      if (!got || got.notModified) throw new Error(`segment ${part.key} is registered but missing`);
      for (const s of decodeSegment(got.body).series) {
        let entry = sources.get(s.id);
        if (!entry) sources.set(s.id, (entry = { metric: s.metric, tags: { ...s.tags }, list: [] }));
        entry.list.push({ data: { ts: s.ts, fields: s.fields }, sortedUnique: true });
      }
    }
    const series: SegmentSeriesInput[] = [];
    for (const [id, { metric, tags, list }] of sources) {
      const merged = mergeSources(list);
      for (const res of ROLLUP_RESOLUTIONS) {
        const byField = new Map<string, Bucket[]>();
        for (const [field, col] of Object.entries(merged.fields)) {
          const buckets = bucketize(merged.ts, col, res.ms);
          if (buckets.length > 0) byField.set(field, buckets);
        }
        if (byField.size === 0) continue;
        series.push({ id: rollupSeriesId(id, res.name), metric, tags, ...bucketsToColumns(byField) });
      }
    }
    await this.store(ref, key, window, WINDOW_MS, series, (e) => e.window === window && !isDayRollupKey(e.key));
    return sources.size;
  }

  /** Fold the 1 h buckets of a day's hourly rollups into one object per (shard, day). */
  private async rollupDay(ref: ShardRef, day: number, hourly: [number, string][], key: string): Promise<void> {
    const rows = new Map<string, { metric: string; tags: Record<string, string>; ts: number[]; fields: Map<string, FieldValue[]> }>();
    const daySuffix = rollupSeriesId('', DAY_ROLLUP_RESOLUTION);
    for (const [, hourKey] of [...hourly].sort(([a], [b]) => a - b)) {
      const got = await this.objects.get(hourKey);
      if (!got || got.notModified) throw new Error(`rollup ${hourKey} is registered but missing`);
      for (const s of decodeSegment(got.body).series) {
        if (!s.id.endsWith(daySuffix)) continue;
        let r = rows.get(s.id);
        if (!r) rows.set(s.id, (r = { metric: s.metric, tags: { ...s.tags }, ts: [], fields: new Map() }));
        const before = r.ts.length;
        r.ts.push(...s.ts);
        for (const [f, col] of Object.entries(s.fields)) {
          let dst = r.fields.get(f);
          if (!dst) r.fields.set(f, (dst = new Array<FieldValue>(before).fill(null)));
          dst.push(...col);
        }
        for (const col of r.fields.values()) while (col.length < r.ts.length) col.push(null);
      }
    }
    const series: SegmentSeriesInput[] = [...rows]
      .map(([id, r]) => ({ id, metric: r.metric, tags: r.tags, ts: r.ts, fields: Object.fromEntries(r.fields) }));
    await this.store(ref, key, day, DAY_MS, series, (e) => e.window === day && isDayRollupKey(e.key));
  }

  /** Write a rollup object covering [start, start + span) and register it in place of `replaces`. */
  private async store(ref: ShardRef, key: string, start: number, span: number, series: SegmentSeriesInput[], replaces: (e: CatalogEntry) => boolean): Promise<void> {
    series.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
    const bytes = encodeSegment({ ns: ref.ns, shard: ref.shard, window: start, series });
    await this.objects.put(key, bytes);
    const samples = series.reduce((n, s) => n + s.ts.length, 0);
    const entry = entryOf(key, bytes, { window: start, part: 0, fence: 0, series, samples, minTs: start, maxTs: start + span - 1, createdAt: this.options.clock.now() });
    await this.rollups.add(ref, entry, replaces);
  }
}
