import { canonicalSeries, nameMap, type SeriesColumns } from '@s4/core';
import { mapLimit } from '../concurrency.js';
import { mergeWindows } from './raw-reader.js';
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
    for (const w of windows) {
      const sources = await raw.sources(
        spec,
        entries.filter((e) => e.window === w),
        scan.logs.filter((l) => l.window === w && !found.has(l.id)),
        found,
      );
      for (const [id, { key, windows: ws }] of sources) {
        if (found.has(id)) continue;
        const data = withoutDeleted(mergeWindows(ws, spec, spec.fields), key, dead);
        const n = data.ts.length;
        if (n === 0) continue;
        const fields: SeriesColumns['fields'] = nameMap();
        for (const [f, col] of Object.entries(data.fields)) if (col[n - 1] !== null) fields[f] = [col[n - 1]!];
        found.set(id, { id, metric: key.metric, tags: key.tags, ts: [data.ts[n - 1]!], fields });
      }
    }
    return [...found.values()];
  });
  return perShard.flat().sort((a, b) => (canonicalSeries(a) < canonicalSeries(b) ? -1 : 1));
}
