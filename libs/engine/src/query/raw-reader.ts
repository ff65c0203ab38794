import { tagsMatch, type HotLog, type ObjectStore, type SeriesColumns, type SeriesKey } from '@s4/core';
import { decodeBlock, decodeFooter, decodeRecords, type CatalogEntry, type FooterEntry, type SegmentFooter } from '@s4/format';
import { clip, concatWindows, mergeSources, type Source } from '../columns/merge.js';
import { mapLimit } from '../concurrency.js';
import type { ObjectCache } from './cache.js';
import { candidates } from './footer-index.js';
import type { QueryCounters, QuerySpec } from './types.js';

/** Blocks closer than this are fetched with one ranged GET. */
const COALESCE_GAP = 256 * 1024;

export interface QueryCaches {
  readonly footers: ObjectCache<SegmentFooter>;
  /** Decoded blocks: a warm query pays neither decompression nor decoding. */
  readonly blocks: ObjectCache<SeriesColumns>;
}

/** Per series: its key and, per window, its raw sources in ascending precedence (parts, then hot). */
export type RawSources = Map<string, { key: SeriesKey; windows: Map<number, Source[]> }>;

/**
 * Reads segment objects (parts and rollups alike): footers and blocks through the caches, the
 * missing blocks of one object with as few ranged GETs as their gaps allow.
 */
export class RawReader {
  constructor(
    private readonly objects: ObjectStore,
    private readonly caches: QueryCaches,
    private readonly counters: QueryCounters,
    /** Object reads in flight per query. */
    private readonly concurrency: number,
  ) {}

  async footer(entry: CatalogEntry): Promise<SegmentFooter> {
    const cached = this.caches.footers.get(entry.key);
    if (cached) return cached;
    const bytes = await this.read(entry.key, entry.footerOffset, entry.footerLength);
    const footer = decodeFooter(bytes);
    this.caches.footers.set(entry.key, footer, entry.footerLength * 3);
    return footer;
  }

  /**
   * Each wanted block, decoded; neighbouring blocks share one ranged GET. Cached columns are
   * shared between queries, so callers must treat them as read-only.
   */
  async readBlocks(entry: CatalogEntry, wanted: readonly FooterEntry[]): Promise<SeriesColumns[]> {
    const out = new Array<SeriesColumns>(wanted.length);
    const missing: number[] = [];
    wanted.forEach((s, i) => {
      const hit = this.caches.blocks.get(`${entry.key}#${s.offset}`);
      if (hit) out[i] = hit;
      else missing.push(i);
    });
    missing.sort((a, b) => wanted[a]!.offset - wanted[b]!.offset);
    const runs: number[][] = [];
    for (const i of missing) {
      const run = runs[runs.length - 1];
      const last = run && wanted[run[run.length - 1]!]!;
      if (run && last && wanted[i]!.offset - (last.offset + last.length) <= COALESCE_GAP) run.push(i);
      else runs.push([i]);
    }
    await mapLimit(runs, 8, async (run) => {
      const first = wanted[run[0]!]!;
      const last = wanted[run[run.length - 1]!]!;
      const bytes = await this.read(entry.key, first.offset, last.offset + last.length - first.offset);
      for (const i of run) {
        const s = wanted[i]!;
        const columns = decodeBlock(bytes.subarray(s.offset - first.offset, s.offset - first.offset + s.length), s);
        out[i] = columns;
        this.caches.blocks.set(`${entry.key}#${s.offset}`, columns, decodedBytes(columns));
      }
    });
    return out;
  }

  /**
   * Per matching series and window: the raw sources in ascending precedence (parts in the order
   * given, then hot logs). Series in `skip` are not read from the parts.
   */
  async sources(spec: QuerySpec, entries: readonly CatalogEntry[], logs: readonly HotLog[], skip?: ReadonlyMap<string, unknown>): Promise<RawSources> {
    const bySeries: RawSources = new Map();
    const sourcesOf = (id: string, key: SeriesKey, window: number) => {
      let s = bySeries.get(id);
      if (!s) bySeries.set(id, (s = { key, windows: new Map() }));
      let list = s.windows.get(window);
      if (!list) s.windows.set(window, (list = []));
      return list;
    };
    const perEntry = await mapLimit(entries, Math.max(1, Math.ceil(this.concurrency / 2)), async (entry) => {
      const footer = await this.footer(entry);
      const wanted = candidates(footer, spec).filter((s) => !skip?.has(s.id) && s.metric === spec.metric && tagsMatch(s.tags, spec.tags) && s.maxTs >= spec.from && s.minTs < spec.to);
      return { entry, wanted, blocks: await this.readBlocks(entry, wanted) };
    });
    // Insert in catalog order (window, fence, part), so precedence is right whatever finished first.
    for (const { entry, wanted, blocks } of perEntry)
      wanted.forEach((s, i) => sourcesOf(s.id, { metric: s.metric, tags: s.tags }, entry.window).push({ data: blocks[i]!, sortedUnique: true }));
    for (const log of logs) {
      if (!tagsMatch(log.key.tags, spec.tags)) continue;
      sourcesOf(log.id, log.key, log.window).push({ data: decodeRecords(log.data), sortedUnique: false });
    }
    return bySeries;
  }

  private async read(key: string, offset: number, length: number): Promise<Uint8Array> {
    const got = await this.objects.get(key, { range: { offset, length } });
    if (!got || got.notModified) throw new Error(`segment ${key} is registered in the catalog but missing from the object store`);
    this.counters.objectReads++;
    this.counters.objectBytes += got.body.length;
    return got.body;
  }
}

/** One series' windows merged (newest source wins per timestamp), concatenated, clipped to the spec. */
export function mergeWindows(windows: Map<number, Source[]>, spec: QuerySpec, fields: readonly string[] | undefined): SeriesColumns {
  const parts = [...windows.keys()].sort((a, b) => a - b).map((w) => mergeSources(windows.get(w)!));
  return clip(concatWindows(parts), spec.from, spec.to, fields);
}

/** Roughly what decoded columns occupy: 8 bytes a value, more for strings and nested values. */
function decodedBytes(c: SeriesColumns): number {
  let n = 64 + c.ts.length * 8;
  for (const col of Object.values(c.fields)) {
    n += 32 + col.length * 8;
    const sample = col.find((v) => v !== null && typeof v !== 'number' && typeof v !== 'boolean');
    if (sample !== undefined) n += col.length * (typeof sample === 'string' ? sample.length * 2 + 16 : JSON.stringify(sample).length * 2);
  }
  return n;
}
