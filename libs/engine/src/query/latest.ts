import { WINDOW_MS, canonicalSeries, nameMap, type SeriesColumns } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import { inSpec, mergeWindows, type RawSources } from './raw-reader.js';
import { selects } from './selector.js';
import { deletedFor } from './deleted.js';
import { withoutDeleted } from '../deletes/tombstones.js';
import type { Readers } from './readers.js';
import type { QuerySpec, SeriesResult } from './types.js';

/**
 * The latest sample in [from, to) of every matching series. Each series is read in the newest
 * window that holds it (found from the parts' listings and the hot logs before any block is
 * read), and in the next older one only when that window had nothing in range for it (its
 * samples deleted, or none inside the range after all).
 */
export async function latest({ hot, planner, raw, concurrency, tombstones }: Readers, spec: QuerySpec): Promise<SeriesResult[]> {
  const deleted = deletedFor({ tombstones }, spec.metric);
  const perShard = await mapLimit(planner.shards(spec.metric), Math.max(1, Math.ceil(concurrency / 4)), async (ref) => {
    const scan = await hot.scan(ref, spec.metric, spec.from, spec.to, spec);
    const entries = await planner.segmentEntries(ref, spec, scan.generation);
    const dead = await deleted(ref.ns);
    // Per series, the windows that may hold its samples in range and, per window, where its
    // parts' samples there end (see laterEnd). Visiting every window in turn instead cost two
    // listings of each part of the day for every latest query.
    const held = new Map<string, Map<number, number>>();
    const hold = (id: string, window: number, end: number) => {
      let ends = held.get(id);
      if (!ends) held.set(id, (ends = new Map<number, number>()));
      const was = ends.get(window);
      ends.set(window, was === undefined ? end : laterEnd(was, end));
    };
    const listings = await mapLimit(entries, Math.max(1, Math.ceil(concurrency / 2)), (e) => raw.listed(e, spec));
    entries.forEach((e, k) => {
      // A day object is listed once per hour window it holds; its entries span the day.
      const from = Math.max(spec.from, e.window);
      const to = Math.min(spec.to, e.window + WINDOW_MS);
      for (const s of listings[k]!) if (inSpec(s, spec) && s.maxTs >= from && s.minTs < to) hold(s.id, e.window, s.maxTs < to ? s.maxTs : UNKNOWN);
    });
    for (const l of scan.logs) if (selects(spec, l.key.tags)) hold(l.id, l.window, HOT_ONLY);
    const windowsOf = new Map([...held].map(([id, ends]) => [id, [...ends.keys()].sort((a, b) => b - a)]));

    const found = new Map<string, SeriesResult>();
    /** The newest sample in `range` of each series `sources` holds that is not found yet. */
    const take = (sources: RawSources, range: QuerySpec) => {
      for (const [id, { key, windows: ws }] of sources) {
        if (found.has(id)) continue;
        const data = withoutDeleted(mergeWindows(ws, range, spec.fields), key, dead);
        const n = data.ts.length;
        if (n === 0) continue;
        const fields: SeriesColumns['fields'] = nameMap();
        for (const [f, col] of Object.entries(data.fields)) if (col[n - 1] !== null) fields[f] = [col[n - 1]!];
        found.set(id, { id, metric: key.metric, tags: key.tags, ts: [data.ts[n - 1]!], fields });
      }
    };
    const tried = new Map<string, number>();
    for (;;) {
      // The next window of each series not found yet.
      const byWindow = new Map<number, Set<string>>();
      for (const [id, windows] of windowsOf) {
        if (found.has(id)) continue;
        const at = tried.get(id) ?? 0;
        if (at >= windows.length) continue;
        tried.set(id, at + 1);
        const w = windows[at]!;
        let ids = byWindow.get(w);
        if (!ids) byWindow.set(w, (ids = new Set()));
        ids.add(id);
      }
      if (byWindow.size === 0) break;
      for (const w of [...byWindow.keys()].sort((a, b) => b - a)) {
        const ids = byWindow.get(w)!;
        const keep = (id: string, window: number) => window === w && ids.has(id);
        const parts = entries.filter((e) => e.window === w);
        const logs = () => scan.logs.filter((l) => l.window === w && ids.has(l.id) && !found.has(l.id));
        // First from where the parts' samples of these series end, to the end of the range: a
        // series with a sample there has its latest there, and only the row groups holding it are
        // decoded (a whole hour block per series was most of a latest query: 128 ms for 200
        // sensors at 1 Hz, where a restarted server with a warm cache took 4). The same range for
        // every source, so the newest write of a timestamp still wins. Series with nothing there
        // (their last samples deleted, or hot only) are then read over the whole range.
        let end = Number.POSITIVE_INFINITY;
        for (const id of ids) end = Math.min(end, held.get(id)!.get(w)!);
        if (end > spec.from && end < spec.to) {
          const recent = { ...spec, from: end };
          take(await raw.sources(recent, parts, logs(), found, keep), recent);
        }
        take(await raw.sources(spec, parts, logs(), found, keep), spec);
      }
    }
    return [...found.values()];
  });
  return perShard.flat().sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
}

/**
 * Where a series' samples in a window end, as its parts' listings say: the latest of their last
 * sample times, UNKNOWN when a part reaches past the range (its last sample says nothing of what
 * is inside), HOT_ONLY while only hot logs hold it (they are read whole, so they set no bound).
 */
const UNKNOWN = Number.NEGATIVE_INFINITY;
const HOT_ONLY = Number.POSITIVE_INFINITY;

function laterEnd(a: number, b: number): number {
  if (a === UNKNOWN || b === UNKNOWN) return UNKNOWN;
  if (a === HOT_ONLY) return b;
  if (b === HOT_ONLY) return a;
  return Math.max(a, b);
}
