import { canonicalSeries, requiredPairs, seriesId, type SeriesColumns, type SeriesKey } from '@s4/core';
import {
  bucketsOfGroup,
  columnsToBuckets,
  isGroupedRollup,
  keysOfBlock,
  keysOfBlockWith,
  parseGroupEntryId,
  parseRollupSeriesId,
  type CatalogEntry,
  type FooterEntry,
  type GroupEntryId,
  type GroupedSeries,
  type SegmentFooter,
} from '@s4/format';
import { mapLimit } from '../concurrency.js';
import type { Bucket } from '../rollup/buckets.js';
import { pickResolution } from '../rollup/resolutions.js';
import { candidates } from './footer-index.js';
import type { RawReader } from './raw-reader.js';
import { selects } from './selector.js';
import type { QuerySpec } from './types.js';

/**
 * Group blocks read together with a metric's keys block (one GET instead of two) as long as they
 * add at most this many bytes: a few milliseconds of transfer, against a round trip to S3.
 */
const READ_AHEAD_BYTES = 256 * 1024;

/** How many objects the reader remembers having read the keys block of. */
const KEYS_READ_REMEMBERED = 10_000;

/** Receives the buckets of one field of one series (by its raw series id). */
export type BucketSink = (id: string, key: SeriesKey, field: string, buckets: Bucket[]) => void;

/**
 * Reads buckets from rollup objects (hourly or day; rollup.md). Column versions 1 and 2 have an
 * entry per series and resolution (`<series id>.<resolution>`, or `.raw` for a series no
 * resolution paid for); version 3 a keys entry per metric and bucket groups shared by series.
 * Per series it reads the coarsest stored resolution that divides the step.
 */
export class RollupReader {
  /** Objects whose keys block was read lately (so is likely in the block cache), oldest first. */
  private readonly keysRead = new Set<string>();

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
    // Version 3 stores keys, not ids: hash each series once per query, not once per object.
    const ids = new Map<string, string>();
    await mapLimit([...rollups], Math.max(1, Math.ceil(this.concurrency / 2)), async (entry) => {
      const footer = await this.reader.footer(entry);
      const fallback = isGroupedRollup(footer) ? await this.readGrouped(entry, footer, spec, step, add, ids) : await this.readPerSeries(entry, footer, spec, step, add);
      if (fallback.size > 0) raw.set(entry, fallback);
    });
    return raw;
  }

  /** The series a rollup object holds (whether or not a resolution was stored for them). */
  async seriesKeys(entry: CatalogEntry, metrics?: ReadonlySet<string>): Promise<SeriesKey[]> {
    const footer = await this.reader.footer(entry);
    if (!isGroupedRollup(footer)) return footer.series.filter((s) => !metrics || metrics.has(s.metric));
    return (await this.keys(entry, footer, (m) => !metrics || metrics.has(m))).flatMap((k) => k.series);
  }

  /** Column versions 1 and 2: an entry per series and resolution. */
  private async readPerSeries(entry: CatalogEntry, footer: SegmentFooter, spec: QuerySpec, step: number, add: BucketSink): Promise<Set<string>> {
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
    const blocks = await this.reader.readBlocks(
      entry,
      wanted.map((w) => w.entry),
    );
    wanted.forEach(({ id, entry: s }, i) => {
      const data = blocks[i]!;
      for (const [field, buckets] of columnsToBuckets(data.ts, data.fields)) add(id, { metric: s.metric, tags: s.tags }, field, buckets);
    });
    return fallback;
  }

  /**
   * Column version 3: the metric's keys block says which series match and what each stored; then
   * only the bucket groups at the chosen resolutions that hold a chosen series are read.
   */
  private async readGrouped(entry: CatalogEntry, footer: SegmentFooter, spec: QuerySpec, step: number, add: BucketSink, ids: Map<string, string>): Promise<Set<string>> {
    const fallback = new Set<string>();
    const mine = footer.series.filter((s) => s.metric === spec.metric).map((s) => ({ s, g: parseGroupEntryId(s.id) }));
    const keysEntry = mine.find((x) => x.g?.resolution === null);
    if (!keysEntry) return fallback;
    // Groups of one resolution cover consecutive ordinals, from their first to the next group's.
    const groups = mine.filter((x): x is { s: FooterEntry; g: GroupEntryId & { resolution: string } } => x.g !== null && x.g.resolution !== null);
    // On a cold object the groups at the resolution most series will be read at come with the
    // keys block, in the same ranged GET (they follow it in the object), unless that reads much
    // more than needed; once the keys block is cached only the groups a chosen series needs are.
    const cold = !this.keysRead.has(entry.key);
    const likely = cold ? pickResolution(step, new Set(groups.map((x) => x.g.resolution))) : null;
    const ahead = groups.filter((x) => x.g.resolution === likely);
    const read = new Map<FooterEntry, SeriesColumns>();
    const fetch = async (list: readonly FooterEntry[]) => {
      const missing = list.filter((s) => !read.has(s));
      const blocks = await this.reader.readBlocks(entry, missing);
      missing.forEach((s, i) => read.set(s, blocks[i]!));
    };
    await fetch([keysEntry.s, ...(ahead.reduce((n, x) => n + x.s.length, 0) <= READ_AHEAD_BYTES ? ahead.map((x) => x.s) : [])]);
    this.keysRead.delete(entry.key);
    this.keysRead.add(entry.key);
    if (this.keysRead.size > KEYS_READ_REMEMBERED) this.keysRead.delete(this.keysRead.values().next().value!);
    // Per resolution chosen: the ordinals of the series read at it.
    const chosen = new Map<string, Map<number, { id: string; key: GroupedSeries }>>();
    const keysBlock = read.get(keysEntry.s)!;
    const pairs = requiredPairs(spec);
    const listed = pairs.length > 0 ? keysOfBlockWith(spec.metric, keysBlock, pairs) : keysOfBlock(spec.metric, keysBlock).entries();
    for (const [ordinal, key] of listed) {
      if (!selects(spec, key.tags)) continue;
      const c = canonicalSeries(key);
      let id = ids.get(c);
      if (id === undefined) ids.set(c, (id = seriesId(key)));
      const res = pickResolution(step, key.resolutions);
      if (res === null) {
        fallback.add(id);
        continue;
      }
      let m = chosen.get(res);
      if (!m) chosen.set(res, (m = new Map<number, { id: string; key: GroupedSeries }>()));
      m.set(ordinal, { id, key });
    }
    const wanted = groups.filter(({ g }, i) => {
      const series = chosen.get(g.resolution);
      if (!series) return false;
      const next = groups[i + 1]?.g;
      const end = next && next.resolution === g.resolution ? next.first : Infinity;
      for (const ordinal of series.keys()) if (ordinal >= g.first && ordinal < end) return true;
      return false;
    });
    await fetch(wanted.map((w) => w.s));
    for (const { s: groupEntry, g } of wanted) {
      const series = chosen.get(g.resolution)!;
      for (const [ordinal, byField] of bucketsOfGroup(read.get(groupEntry)!, footer.window, g.resolution, series)) {
        const s = series.get(ordinal);
        if (!s) continue;
        for (const [field, buckets] of byField) add(s.id, { metric: s.key.metric, tags: s.key.tags }, field, buckets);
      }
    }
    return fallback;
  }

  /** The keys blocks of the metrics `want` picks: per metric, its ordinal and its series. */
  private async keys(entry: CatalogEntry, footer: SegmentFooter, want: (metric: string) => boolean): Promise<{ metric: number; series: GroupedSeries[] }[]> {
    const entries = footer.series.filter((s) => want(s.metric) && parseGroupEntryId(s.id)?.resolution === null);
    const blocks = await this.reader.readBlocks(entry, entries);
    return entries.map((s, i) => ({ metric: parseGroupEntryId(s.id)!.metric, series: keysOfBlock(s.metric, blocks[i]!) }));
  }
}
