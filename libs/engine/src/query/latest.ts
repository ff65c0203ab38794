import { canonicalSeries, nameMap, type SeriesColumns } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import { mergeWindows, type RawSources } from './raw-reader.js';
import type { CatalogEntry } from '@s4/format';
import { deletedFor } from './deleted.js';
import { withoutDeleted } from '../deletes/tombstones.js';
import type { Readers } from './readers.js';
import type { QuerySpec, SeriesResult } from './types.js';

/**
 * The latest sample in [from, to) of every matching series. Windows are visited newest first;
 * a series found in a newer window is not read again in older ones.
 */
export async function latest({ hot, planner, raw, concurrency, tombstones }: Readers, spec: QuerySpec): Promise<SeriesResult[]> {
  const deleted = deletedFor({ tombstones }, spec.metric);
  const perShard = await mapLimit(planner.shards(spec.metric), Math.max(1, Math.ceil(concurrency / 4)), async (ref) => {
    const scan = await hot.scan(ref, spec.metric, spec.from, spec.to, spec);
    const entries = await planner.segmentEntries(ref, spec, scan.generation);
    const dead = await deleted(ref.ns);
    const windows = [...new Set([...entries.map((e) => e.window), ...scan.logs.map((l) => l.window)])].sort((a, b) => b - a);
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
    for (const w of windows) {
      const parts = entries.filter((e) => e.window === w);
      const logs = () => scan.logs.filter((l) => l.window === w && !found.has(l.id));
      // First the end of the window only, from the last sample time its oldest-ending part holds:
      // a series with a sample there has its latest there, and only the row groups holding it are
      // decoded (a whole hour block per series was most of a latest query: 128 ms for 200 sensors
      // at 1 Hz, where a restarted server with a warm cache took 4). The same range for every part,
      // so the newest write of a timestamp still wins. Series with nothing there (ended earlier,
      // or their last samples deleted) are then read over the whole range, as before.
      const end = recentFrom(parts, spec);
      if (end > spec.from) {
        const recent = { ...spec, from: end };
        take(await raw.sources(recent, parts, logs(), found), recent);
      }
      take(await raw.sources(spec, parts, logs(), found), spec);
    }
    return [...found.values()];
  });
  return perShard.flat().sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
}

/**
 * Where the end of a window's parts starts: the earliest of their last sample times, or the range's
 * start when a part reaches past the range (its last sample says nothing of what is inside) or
 * there is no part (hot data only, read whole anyway).
 */
function recentFrom(parts: readonly CatalogEntry[], spec: QuerySpec): number {
  if (parts.length === 0) return spec.from;
  let end = Number.POSITIVE_INFINITY;
  for (const p of parts) {
    if (p.maxTs >= spec.to) return spec.from;
    end = Math.min(end, p.maxTs);
  }
  return Math.max(spec.from, end);
}
