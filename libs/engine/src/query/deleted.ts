import { DAY_MS, WINDOW_MS, isDayRollupKey, tagsMatch, type SeriesKey } from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import { overlapsAny, type Tombstone, type TombstoneSource } from '../deletes/tombstones.js';
import type { RollupPlan } from './planner.js';

/**
 * The query side of deletes, kept to two calls so the query operations stay as they were:
 * `deletedOf` fetches a metric's tombstones (none for a listing without a metric: it checks each
 * series against every tombstone of the namespace instead), `withoutDeletedRollups` sends the
 * windows a tombstone touches back to raw data, where the deleted samples are dropped per series.
 */
export async function deletedOf(readers: { readonly tombstones?: TombstoneSource | undefined }, ns: string, metric: string | undefined): Promise<readonly Tombstone[]> {
  const source = readers.tombstones;
  if (!source) return [];
  if (metric !== undefined) return source.forMetric(ns, metric);
  return source.list(ns);
}

/**
 * `deletedOf` once per namespace for the whole of one query (its shards share the answer), so a
 * query revalidates the tombstones once rather than once per shard.
 */
export function deletedFor(readers: { readonly tombstones?: TombstoneSource | undefined }, metric: string | undefined): (ns: string) => Promise<readonly Tombstone[]> {
  const memo = new Map<string, Promise<readonly Tombstone[]>>();
  return (ns) => {
    let p = memo.get(ns);
    if (!p) memo.set(ns, (p = deletedOf(readers, ns, metric)));
    return p;
  };
}

/**
 * A rollup holds the deleted samples in its buckets: a window whose rollup lists a series a
 * tombstone touching the window matches is answered from raw data instead (`seriesOf` says which
 * series of the given metrics a rollup holds, from what the rollup reader reads anyway).
 */
export async function withoutDeletedRollups(plan: RollupPlan, dead: readonly Tombstone[], seriesOf: (entry: CatalogEntry, metrics: ReadonlySet<string>) => Promise<readonly SeriesKey[]>): Promise<RollupPlan> {
  if (dead.length === 0 || plan.rolled.size === 0) return plan;
  const rolled = new Map(plan.rolled);
  const skipRaw = new Set(plan.skipRaw);
  for (const [w, entry] of plan.rolled) {
    const day = isDayRollupKey(entry.key);
    const touching = dead.filter((t) => overlapsAny([t], w, w + (day ? DAY_MS : WINDOW_MS)));
    if (touching.length === 0) continue;
    const held = await seriesOf(entry, new Set(touching.map((t) => t.metric)));
    if (!held.some((s) => touching.some((t) => t.metric === s.metric && tagsMatch(s.tags, t.tags)))) continue;
    rolled.delete(w);
    if (day) for (let h = w; h < w + DAY_MS; h += WINDOW_MS) skipRaw.delete(h);
  }
  return { ...plan, rolled, skipRaw };
}
