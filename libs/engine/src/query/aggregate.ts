import { DAY_MS, canonicalSeries, isDayRollupKey, nameMap, own, selects, selectsAll, type SeriesKey, type ShardRef } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import { aggColumn, aggValue, bucketize, mergeBuckets, type Bucket } from '../rollup/buckets.js';
import { inSpec, mergeWindows, type RawSources } from './raw-reader.js';
import { deletedFor, withoutDeletedRollups } from './deleted.js';
import { withoutDeleted, type Tombstone } from '../deletes/tombstones.js';
import type { CatalogEntry } from '@s4/format';
import type { RollupPlan } from './planner.js';
import type { Readers } from './readers.js';
import type { AggregateSpec, SeriesResult } from './types.js';

/** Buckets of one series, per field, before grouping. */
interface SeriesBuckets {
  id: string;
  key: SeriesKey;
  fields: Map<string, Bucket[]>;
}

/**
 * One value per step bucket and agg, per series or per group. Whole hour windows inside the
 * range are answered from their rollup when it was computed from exactly the window's current
 * parts and no hot data of the selector waits in that window; everything else from raw data.
 */
export async function aggregate(readers: Readers, spec: AggregateSpec): Promise<SeriesResult[]> {
  const deleted = deletedFor(readers, spec.metric);
  const perShard = await mapLimit(readers.planner.shards(spec.metric), Math.max(1, Math.ceil(readers.concurrency / 4)), (ref) => aggregateShard(readers, ref, spec, deleted));
  return group(perShard, spec);
}

/** Series combined by the spec's groupBy (kept apart when it is undefined), one column per field and agg. */
function group(perShard: readonly SeriesBuckets[][], spec: AggregateSpec): SeriesResult[] {
  const groups = new Map<string, { key: SeriesKey; fields: Map<string, Bucket[][]> }>();
  for (const list of perShard)
    for (const s of list) {
      const tags = spec.groupBy === undefined ? s.key.tags : nameMap(spec.groupBy.flatMap((k) => { const v = own(s.key.tags, k); return v === undefined ? [] : [[k, v] as const]; }));
      const gk = spec.groupBy === undefined ? s.id : JSON.stringify(Object.entries(tags).sort());
      let g = groups.get(gk);
      if (!g) groups.set(gk, (g = { key: { metric: s.key.metric, tags }, fields: new Map() }));
      for (const [f, buckets] of s.fields) {
        let l = g.fields.get(f);
        if (!l) g.fields.set(f, (l = []));
        l.push(buckets);
      }
    }
  const out: SeriesResult[] = [];
  for (const [gk, g] of groups) {
    const merged = new Map([...g.fields].map(([f, lists]) => [f, mergeBuckets(lists, spec.step)] as const));
    const ts = [...new Set([...merged.values()].flatMap((l) => l.map((b) => b.start)))].sort((a, b) => a - b);
    if (ts.length === 0) continue;
    const index = new Map(ts.map((t, i) => [t, i]));
    const fields = nameMap<(number | null)[]>();
    for (const [f, buckets] of [...merged].sort(([a], [b]) => (a < b ? -1 : 1)))
      for (const agg of spec.aggs) {
        const col = new Array<number | null>(ts.length).fill(null);
        for (const b of buckets) col[index.get(b.start)!] = aggValue(b, agg);
        fields[aggColumn(agg, f)] = col;
      }
    out.push({ id: gk, metric: g.key.metric, tags: g.key.tags, ts, fields });
  }
  return out.sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
}

async function aggregateShard({ hot, planner, raw, rollups, concurrency }: Readers, ref: ShardRef, spec: AggregateSpec, deleted: (ns: string) => Promise<readonly Tombstone[]>): Promise<SeriesBuckets[]> {
  const scan = await hot.scan(ref, spec.metric, spec.from, spec.to, spec);
  const entries = await planner.segmentEntries(ref, spec, scan.generation);
  // A selector of a few series: a shard whose parts list none of them (the series index says,
  // or the footers) holds no buckets of them either. Its rollup objects are not read: one
  // sensor's 1-min aggregates over a day read the rollups of every shard (240 objects on the
  // float bench) for the one shard that holds it.
  if (!selectsAll(spec) && !scan.logs.some((l) => selects(spec, l.key.tags))) {
    const listings = await mapLimit(entries, Math.max(1, Math.ceil(concurrency / 2)), (e) => raw.listed(e, spec));
    if (listings.every((list) => !list.some((s) => inSpec(s, spec)))) return [];
  }
  const dead = await deleted(ref.ns);
  const { rolled, skipRaw, clipped } = await withoutDeletedRollups(await planner.rollupPlan(ref, spec, entries, scan.logs, scan.generation), dead, (e, metrics) => rollups.seriesKeys(e, metrics));

  const series = new Map<string, { key: SeriesKey; fields: Map<string, Bucket[][]> }>();
  const add = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => {
    if (spec.fields && !spec.fields.includes(field)) return;
    let s = series.get(id);
    if (!s) series.set(id, (s = { key, fields: new Map() }));
    let l = s.fields.get(field);
    if (!l) s.fields.set(field, (l = []));
    l.push(buckets);
  };
  const addRaw = (sources: RawSources) => {
    for (const [id, { key, windows }] of sources) {
      const data = withoutDeleted(mergeWindows(windows, spec, spec.fields), key, dead);
      // A field without numbers has no buckets here, as it has none in a rollup: the answer is the same either way.
      for (const [field, col] of Object.entries(data.fields)) {
        const buckets = bucketize(data.ts, col, spec.step);
        if (buckets.length > 0) add(id, key, field, buckets);
      }
    }
  };

  // The rollup object answering each window (a day object answers every hour of its day).
  const rollupOf = (w: number) => (skipRaw.has(w) ? rolled.get(Math.floor(w / DAY_MS) * DAY_MS) : rolled.get(w));
  const fromRollup = (w: number) => skipRaw.has(w) || (rolled.has(w) && !isDayRollupKey(rolled.get(w)!.key));
  const [rawSources, needRaw] = await Promise.all([
    raw.sources(
      spec,
      entries.filter((e) => !fromRollup(e.window)),
      scan.logs.filter((l) => !fromRollup(l.window)),
    ),
    readRollups(rollups, spec, rolled, clipped, add),
  ]);
  addRaw(rawSources);
  // Series a rollup object stores no resolution for that divides the step: their raw parts, in those windows only.
  if (needRaw.size > 0) {
    const keep = (id: string, w: number) => {
      const r = rollupOf(w);
      return r !== undefined && needRaw.get(r)?.has(id) === true;
    };
    addRaw(await raw.sources(spec, entries.filter((e) => fromRollup(e.window) && needRaw.has(rollupOf(e.window)!)), [], undefined, keep));
  }

  return [...series].map(([id, s]) => ({ id, key: s.key, fields: new Map([...s.fields].map(([f, lists]) => [f, mergeBuckets(lists, spec.step)] as const)) }));
}

type BucketAdd = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => void;

/** Every rolled entry's buckets; a day object the range covers in part gives only its buckets inside it. */
async function readRollups(rollups: Readers['rollups'], spec: AggregateSpec, rolled: ReadonlyMap<number, CatalogEntry>, clipped: RollupPlan['clipped'], add: BucketAdd): Promise<Map<CatalogEntry, Set<string>>> {
  const whole = [...rolled].filter(([w]) => !clipped?.has(w)).map(([, e]) => e);
  const parts = [...(clipped ?? [])].filter(([day]) => rolled.has(day));
  const reads = await Promise.all([
    rollups.read(spec, whole, spec.step, add),
    ...parts.map(([day, { from, to }]) =>
      rollups.read(spec, [rolled.get(day)!], spec.step, (id, key, field, buckets) => {
        const kept = buckets.filter((b) => b.start >= from && b.start < to);
        if (kept.length > 0) add(id, key, field, kept);
      }),
    ),
  ]);
  return new Map(reads.flatMap((m) => [...m]));
}
