import { DAY_MS, WINDOW_MS, isDayRollupKey } from '@s4/core';
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

/** A rollup holds the deleted samples in its buckets: windows a tombstone touches are answered from raw data. */
export function withoutDeletedRollups(plan: RollupPlan, dead: readonly Tombstone[]): RollupPlan {
  if (dead.length === 0 || plan.rolled.size === 0) return plan;
  const rolled = new Map(plan.rolled);
  const skipRaw = new Set(plan.skipRaw);
  for (const [w, entry] of plan.rolled) {
    const day = isDayRollupKey(entry.key);
    if (!overlapsAny(dead, w, w + (day ? DAY_MS : WINDOW_MS))) continue;
    rolled.delete(w);
    if (day) for (let h = w; h < w + DAY_MS; h += WINDOW_MS) skipRaw.delete(h);
  }
  return { ...plan, rolled, skipRaw };
}
