import { DAY_MS, WINDOW_MS, allShards, currentDayRollupKey, currentRollupKey, type HotLog, type ShardRef } from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import type { CatalogStore } from '../catalog/catalog-store.js';
import { ROLLUP_RESOLUTIONS, rollupsCanAnswer } from '../rollup/resolutions.js';
import { selects } from './selector.js';
import type { AggregateSpec, QueryEngineOptions, QuerySpec } from './types.js';

/**
 * Which windows come from rollups. Keys of `rolled` are hour windows, or day starts for day
 * rollups (whose hours are in `skipRaw`); every other window is answered from raw data, and so
 * is a series a rollup object has no resolution for that divides the step (rollup-reader.ts).
 */
/** Whether no rollup bucket spans two hours, so that a day object can answer some hours of its day. */
const HOUR_BUCKETS = ROLLUP_RESOLUTIONS.every((r) => WINDOW_MS % r.ms === 0);

export interface RollupPlan {
  readonly rolled: ReadonlyMap<number, CatalogEntry>;
  readonly skipRaw: ReadonlySet<number>;
  /** Day starts in `rolled` whose day the range covers only in part: their buckets are kept only in [from, to). */
  readonly clipped?: ReadonlyMap<number, { readonly from: number; readonly to: number }>;
}

/**
 * Turns a selector into what to read: the shards, the catalog entries (segment parts) that may
 * hold it, and the windows a rollup can answer. The only part of the query engine that reads
 * catalogs.
 */
export class QueryPlanner {
  constructor(
    private readonly catalogs: CatalogStore,
    private readonly options: Pick<QueryEngineOptions, 'ns' | 'shards' | 'route' | 'namespaces'>,
    private readonly rollups?: CatalogStore,
    private readonly clock: { now(): number } = Date,
  ) {}

  /**
   * Every shard of the metric's namespace (a selector names no series id, so any shard may hold
   * it); without a metric, every shard of every namespace.
   */
  shards(metric?: string): ShardRef[] {
    const { route, namespaces } = this.options;
    if (!route || !namespaces) return allShards(this.options.shards).map((shard) => ({ ns: this.options.ns, shard }));
    const list = metric === undefined ? namespaces() : [route(metric)];
    return list.flatMap((n) => allShards(n.shards).map((shard) => ({ ns: n.ns, shard })));
  }

  /** Parts of windows overlapping [from, to) that may hold `metric` (any metric when undefined). */
  async entries(ref: ShardRef, from: number, to: number, generation: number, metric: string | undefined): Promise<CatalogEntry[]> {
    return (await this.catalogs.entries(ref, from, to, generation, WINDOW_MS)).filter((e) => metric === undefined || mayHold(e, metric));
  }

  /** Parts that may hold samples of the spec, in precedence order (window, fence, part). */
  async segmentEntries(ref: ShardRef, spec: QuerySpec, generation: number): Promise<CatalogEntry[]> {
    return (await this.catalogs.entries(ref, spec.from, spec.to, generation, WINDOW_MS))
      .filter((e) => mayHold(e, spec.metric) && e.maxTs >= spec.from && e.minTs < spec.to)
      .sort((a, b) => a.window - b.window || a.fence - b.fence || a.part - b.part);
  }

  /**
   * Windows answered from rollups: whole inside the range, with a rollup computed from exactly
   * the window's current parts (or a day object from exactly the day's current hourly rollups),
   * and no hot data of the selector waiting in them. `entries` are the spec's parts
   * (segmentEntries); the keys are made from every part of the touched days, as the builder
   * makes them (rollup-builder.ts), whatever metric or time a part holds.
   */
  async rollupPlan(ref: ShardRef, spec: AggregateSpec, entries: readonly CatalogEntry[], logs: readonly HotLog[], generation: number): Promise<RollupPlan> {
    const rolled = new Map<number, CatalogEntry>();
    const skipRaw = new Set<number>();
    if (!rollupsCanAnswer(spec.step) || !this.rollups || entries.length === 0) return { rolled, skipRaw };
    const hotWindows = new Set(logs.filter((l) => selects(spec, l.key.tags)).map((l) => l.window));
    // Windows holding the spec's parts: the ones to answer.
    const windowsWanted = new Set(entries.map((e) => e.window));
    // Every part of the days those windows are in: the ones the keys name. Keys made from the
    // spec's parts alone named no stored rollup wherever a window or a day also held parts of
    // other metrics or times (a range starting inside a closed day read that day raw).
    const days = new Set([...windowsWanted].map((w) => Math.floor(w / DAY_MS) * DAY_MS));
    const partsOf = new Map<number, string[]>();
    for (const e of await this.catalogs.entries(ref, Math.min(...days), Math.max(...days) + DAY_MS, generation, WINDOW_MS)) {
      if (!days.has(Math.floor(e.window / DAY_MS) * DAY_MS)) continue;
      let l = partsOf.get(e.window);
      if (!l) partsOf.set(e.window, (l = []));
      l.push(e.key);
    }
    // Rollup registrations do not move the shard generation; revalidate them every few seconds.
    // Entries whose day overlaps the range, not only whose hour does: a day object's window is its
    // day's first hour, and it answers the later hours of a range that starts inside that day.
    const rollupEntries = await this.rollups.entries(ref, spec.from, spec.to, Math.floor(this.clock.now() / 5_000), DAY_MS);
    const byKey = new Map(rollupEntries.map((e) => [e.key, e]));
    const hourly = new Map<number, string>();
    for (const [window, parts] of partsOf) hourly.set(window, currentRollupKey(ref, window, parts));
    // Whole days first: one object per shard-day.
    const covered = new Set<number>();
    const clipped = new Map<number, { from: number; to: number }>();
    for (const day of days) {
      if ([...hotWindows].some((w) => w >= day && w < day + DAY_MS)) continue;
      const whole = day >= spec.from && day + DAY_MS <= spec.to;
      // A closed day's hourly rollups are deleted once its day object exists, so a range that
      // starts or ends inside the day (the last 24 hours) must read the day object or go raw.
      // Its buckets are clipped to the whole hours inside the range, exact while every stored
      // resolution divides the hour (1m, 1h).
      if (!whole && !HOUR_BUCKETS) continue;
      const windows = [...hourly.keys()].filter((w) => w >= day && w < day + DAY_MS);
      const inside = windows.filter((w) => windowsWanted.has(w) && w >= spec.from && w + WINDOW_MS <= spec.to);
      if (inside.length === 0) continue;
      const r = byKey.get(currentDayRollupKey(ref, day, windows.map((w) => hourly.get(w)!)));
      if (!r || !mayHold(r, spec.metric)) continue;
      rolled.set(day, r);
      if (!whole) clipped.set(day, { from: Math.min(...inside), to: Math.max(...inside) + WINDOW_MS });
      for (const w of inside) covered.add(w);
    }
    for (const window of windowsWanted) {
      if (covered.has(window) || window < spec.from || window + WINDOW_MS > spec.to || hotWindows.has(window)) continue;
      const r = byKey.get(hourly.get(window)!);
      if (r && mayHold(r, spec.metric)) rolled.set(window, r);
    }
    for (const w of covered) skipRaw.add(w);
    return { rolled, skipRaw, clipped };
  }
}

function mayHold(entry: CatalogEntry, metric: string): boolean {
  return entry.metrics === null || entry.metrics.includes(metric);
}
