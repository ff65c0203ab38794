import type { SeriesKey } from '@s4/core';
import { columnsToBuckets, parseRollupSeriesId, type CatalogEntry, type FooterEntry } from '@s4/format';
import { mapLimit } from '../concurrency.js';
import type { Bucket } from '../rollup/buckets.js';
import { pickResolution } from '../rollup/resolutions.js';
import { candidates } from './footer-index.js';
import type { RawReader } from './raw-reader.js';
import { selects } from './selector.js';
import type { QuerySpec } from './types.js';

/** Receives the buckets of one field of one series (by its raw series id). */
export type BucketSink = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => void;

/**
 * Reads buckets from rollup objects (hourly or day): segment objects whose entries are
 * `<series id>.<resolution>`, or `<series id>.raw` for a series no resolution paid for
 * (rollup.md). Per series it reads the coarsest stored resolution that divides the step.
 */
export class RollupReader {
  constructor(
    private readonly reader: RawReader,
    /** Object reads in flight per query. */
    private readonly concurrency: number,
  ) {}

  /**
   * Adds the buckets of every matching series of `rollups` to `add`, and returns, per rollup
   * entry, the series it cannot answer at this step: the caller reads those from raw data.
   */
  async read(spec: QuerySpec, rollups: Iterable<CatalogEntry>, step: number, add: BucketSink): Promise<Map<CatalogEntry, Set<string>>> {
    const raw = new Map<CatalogEntry, Set<string>>();
    await mapLimit([...rollups], Math.max(1, Math.ceil(this.concurrency / 2)), async (entry) => {
      const footer = await this.reader.footer(entry);
      const bySeries = new Map<string, Map<string, FooterEntry>>();
      for (const s of candidates(footer, spec)) {
        if (s.metric !== spec.metric || !selects(spec, s.tags)) continue;
        const { id, resolution } = parseRollupSeriesId(s.id);
        let stored = bySeries.get(id);
        if (!stored) bySeries.set(id, (stored = new Map<string, FooterEntry>()));
        stored.set(resolution, s);
      }
      const wanted: { id: string; entry: FooterEntry }[] = [];
      const fallback = new Set<string>();
      for (const [id, stored] of bySeries) {
        const res = pickResolution(step, stored.keys());
        if (res === null) fallback.add(id);
        else wanted.push({ id, entry: stored.get(res)! });
      }
      if (fallback.size > 0) raw.set(entry, fallback);
      const blocks = await this.reader.readBlocks(
        entry,
        wanted.map((w) => w.entry),
      );
      wanted.forEach(({ id, entry: s }, i) => {
        const data = blocks[i]!;
        for (const [field, buckets] of columnsToBuckets(data.ts, data.fields)) add(id, { metric: s.metric, tags: s.tags }, field, buckets);
      });
    });
    return raw;
  }
}
