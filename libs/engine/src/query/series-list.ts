import { canonicalSeries, CorruptDataError, isDaySegmentKey, own, type SeriesKey } from '@s4/core';
import type { IndexedPart, SeriesIndex, SeriesTable } from '@s4/format';
import { slotsOf } from '../series-index/postings.js';
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
 * than once (hot and stored, several shard-days, parts without an index); an index reports each
 * of its series once, however many of its parts hold it.
 */
async function visitSeries(
  { hot, planner, raw, concurrency, tombstones }: Readers,
  selector: SeriesSelector,
  index: SeriesIndexStore | undefined,
  found: (key: SeriesKey) => void,
  /** Series `o` of an index's table, instead of `found` (no object built for it). */
  foundIn: (table: SeriesTable, o: number) => void = (table, o) => found(table.at(o)),
  /**
   * Every series of the index, instead of `foundIn` for each: called when the selector selects
   * every series (no metric, tag or matcher, no tombstone) and the range holds every part the index covers.
   */
  wholeIndex?: (ix: SeriesIndex) => void,
): Promise<void> {
  const { metric, from, to } = selector;
  const deleted = deletedFor({ tombstones }, metric);
  // Per index, the ordinals already reported.
  const seen = new WeakMap<SeriesIndex, Uint8Array>();
  await mapLimit(planner.shards(metric), concurrency, async (ref) => {
    const generation = await hot.generation(ref);
    const dead = await deleted(ref.ns);
    for (const k of await hot.seriesIn(ref, metric, from, to)) if (selects(selector, k.tags) && !coversRange(k, dead, from, to)) found(k);
    // A day object is listed once per window: its footer is read once.
    const entries = [...new Map((await planner.entries(ref, from, to, generation, metric)).map((e) => [e.key, e])).values()];
    const covering = await mapLimit(entries, 4, async (e) => (isDaySegmentKey(e.key) ? undefined : await index?.covering(e)));
    const whole = new Set<SeriesIndex>();
    if (wholeIndex && metric === undefined && Object.keys(selector.tags).length === 0 && !selector.matchers?.length && dead.length === 0) {
      const parts = new Map<SeriesIndex, IndexedPart[]>();
      for (const c of covering) if (c) parts.set(c.index, [...(parts.get(c.index) ?? []), c.part]);
      for (const [ix, list] of parts)
        if (list.length === ix.parts.length && list.every((p) => within(p, from, to))) {
          whole.add(ix);
          wholeIndex(ix);
        }
    }
    await mapLimit(entries, 4, async (e, n) => {
      const covered = covering[n];
      if (covered) {
        // The index's selection is exact (postings.spec.ts): only the range and deletes are left to check.
        const { index: ix, part } = covered;
        if (whole.has(ix)) return;
        let done = seen.get(ix);
        if (!done) seen.set(ix, (done = new Uint8Array(ix.series.length)));
        try {
          for (const i of slotsOf(part, index!.select(ix, selector))) {
            const o = part.ordinals[i]!;
            if (done[o] || part.maxTs(i) < from || part.minTs(i) >= to) continue;
            if (dead.length > 0 && coversRange(ix.series.at(o), dead, from, to)) continue;
            done[o] = 1;
            foundIn(ix.series, o);
          }
          return;
        } catch (err) {
          // A damaged block of the index (read on demand): the footer answers, as for a part without one.
          if (!(err instanceof CorruptDataError)) throw err;
          index!.damaged(e);
        }
      }
      for (const s of (await raw.footer(e)).series) if ((metric === undefined || s.metric === metric) && selects(selector, s.tags) && s.maxTs >= from && s.minTs < to && !coversRange(s, dead, from, to)) found(s);
    });
  });
}

/** True when every series of the part has all its samples in [from, to). */
function within(part: IndexedPart, from: number, to: number): boolean {
  return part.earliest >= from && part.latest < to;
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
  await visitSeries(
    readers,
    selector,
    index,
    (k) => {
      for (const t of Object.keys(k.tags)) keys.add(t);
    },
    (table, o) => {
      for (const t of table.keys(o)) keys.add(t);
    },
    (ix) => {
      for (const t of ix.tags.keys()) keys.add(t);
    },
  );
  return [...keys].sort();
}

/** Values of tag `key` among the selected series, sorted. */
export async function labelValues(readers: Readers, key: string, selector: SeriesSelector, index?: SeriesIndexStore): Promise<string[]> {
  const values = new Set<string>();
  await visitSeries(
    readers,
    selector,
    index,
    (k) => {
      const v = own(k.tags, key);
      if (v !== undefined) values.add(v);
    },
    (table, o) => {
      const v = table.tag(o, key);
      if (v !== undefined) values.add(v);
    },
    (ix) => {
      for (const v of ix.tags.get(key)?.keys() ?? []) values.add(v);
    },
  );
  return [...values].sort();
}
