import { canonicalSeries, own, type SeriesKey } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import type { SeriesIndexStore } from './series-index-store.js';
import type { Readers } from './readers.js';
import { selects, type TagSelector } from './selector.js';
import { deletedFor } from './deleted.js';
import { coversRange } from '../deletes/tombstones.js';

/** Series with data in [from, to) of a metric (any when undefined) whose tags the selector accepts. */
export interface SeriesSelector extends TagSelector {
  readonly metric: string | undefined;
  readonly from: number;
  readonly to: number;
}

/**
 * Calls `found` for every selected series with data in the range, from hot data, then per part
 * from its series index when one covers it, else from its footer. A series may be reported more
 * than once (several windows, parts, or hot and stored).
 */
async function visitSeries({ hot, planner, raw, concurrency, tombstones }: Readers, selector: SeriesSelector, index: SeriesIndexStore | undefined, found: (key: SeriesKey) => void): Promise<void> {
  const { metric, from, to } = selector;
  const deleted = deletedFor({ tombstones }, metric);
  await mapLimit(planner.shards(metric), concurrency, async (ref) => {
    const generation = await hot.generation(ref);
    const dead = await deleted(ref.ns);
    for (const k of await hot.seriesIn(ref, metric, from, to)) if (selects(selector, k.tags) && !coversRange(k, dead, from, to)) found(k);
    // A day object is listed once per window: its footer is read once.
    const entries = [...new Map((await planner.entries(ref, from, to, generation, metric)).map((e) => [e.key, e])).values()];
    await mapLimit(entries, 4, async (e) => {
      const list = (await index?.blocks(e, selector)) ?? (await raw.footer(e)).series;
      for (const s of list) if ((metric === undefined || s.metric === metric) && selects(selector, s.tags) && s.maxTs >= from && s.minTs < to && !coversRange(s, dead, from, to)) found(s);
    });
  });
}

/** Series (metric + tags) with data in [from, to), sorted by canonical form. */
export async function listSeries(readers: Readers, selector: SeriesSelector, index?: SeriesIndexStore): Promise<SeriesKey[]> {
  const found = new Map<string, SeriesKey>();
  // Keyed by canonical form: hot-tier and footer copies of one series may list tags in another order.
  await visitSeries(readers, selector, index, (k) => {
    const c = canonicalSeries(k);
    if (!found.has(c)) found.set(c, { metric: k.metric, tags: k.tags });
  });
  return [...found].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, k]) => k);
}

/** Tag keys of the selected series, sorted. */
export async function labelNames(readers: Readers, selector: SeriesSelector, index?: SeriesIndexStore): Promise<string[]> {
  const keys = new Set<string>();
  await visitSeries(readers, selector, index, (k) => {
    for (const t of Object.keys(k.tags)) keys.add(t);
  });
  return [...keys].sort();
}

/** Values of tag `key` among the selected series, sorted. */
export async function labelValues(readers: Readers, key: string, selector: SeriesSelector, index?: SeriesIndexStore): Promise<string[]> {
  const values = new Set<string>();
  await visitSeries(readers, selector, index, (k) => {
    const v = own(k.tags, key);
    if (v !== undefined) values.add(v);
  });
  return [...values].sort();
}
