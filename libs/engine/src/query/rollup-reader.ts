import type { SeriesKey } from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import { mapLimit } from '../concurrency.js';
import { columnsToBuckets, type Bucket } from '../rollup/buckets.js';
import { rollupSeriesId, type RollupResolution } from '../rollup/resolutions.js';
import { candidates } from './footer-index.js';
import type { RawReader } from './raw-reader.js';
import { selects } from './selector.js';
import type { QuerySpec } from './types.js';

/** Receives the buckets of one field of one series (by its raw series id). */
export type BucketSink = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => void;

/**
 * Reads the buckets of `resolution` of the matching series from rollup objects (hourly or day):
 * they are segment objects whose entries are `<series id>.<resolution>` (rollup.md).
 */
export class RollupReader {
  constructor(
    private readonly reader: RawReader,
    /** Object reads in flight per query. */
    private readonly concurrency: number,
  ) {}

  async read(spec: QuerySpec, rollups: Iterable<CatalogEntry>, resolution: RollupResolution, add: BucketSink): Promise<void> {
    const suffix = rollupSeriesId('', resolution);
    await mapLimit([...rollups], Math.max(1, Math.ceil(this.concurrency / 2)), async (entry) => {
      const footer = await this.reader.footer(entry);
      const wanted = candidates(footer, spec).filter((s) => s.id.endsWith(suffix) && s.metric === spec.metric && selects(spec, s.tags));
      const blocks = await this.reader.readBlocks(entry, wanted);
      wanted.forEach((s, i) => {
        const data = blocks[i]!;
        for (const [field, buckets] of columnsToBuckets(data.ts, data.fields)) add(s.id.slice(0, -suffix.length), { metric: s.metric, tags: s.tags }, field, buckets);
      });
    });
  }
}
