import { WINDOW_MS, isDaySegmentKey, type HotLog, type ObjectStore, type SeriesColumns, type SeriesKey } from '@s4/core';
import { assemble, blockColumnsBytes, columnRanges, decodeBlockColumns, decodeGroupColumns, decodeFooter, groupsOf, decodeRecords, projectBlockColumns, projectColumns, selectFooter, selectPaths, sliceColumns, type BlockColumns, type ByteRange, type CatalogEntry, type FooterEntry, type SegmentFooter } from '@s4/format';
import { clip, concatWindows, lowerBound, mergeSources, type Source } from '../columns/merge.js';
import { mapLimit } from '../concurrency.js';
import type { ObjectCache } from './cache.js';
import type { SeriesIndexStore } from './series-index-store.js';
import { candidates } from './footer-index.js';
import { selectorKey, selects } from './selector.js';
import type { QueryCounters, QuerySpec } from './types.js';

/** Footer entries footerEntries keeps for selections asked again (~250 bytes each: ≤ ~16 MB). */
const PICKED_ENTRIES = 65_536;
/** A part's selection of more entries than this is not kept: as costly to hold as to compute. */
const PICK_MAX_ENTRIES = 1_024;

/** Blocks closer than this are fetched with one ranged GET. */
const COALESCE_GAP = 256 * 1024;
/**
 * Chunks of a projected read closer than this share a GET. Smaller than between blocks: a
 * projection exists to skip the bytes of other paths (bulk reads of records are bound by bytes),
 * and its GETs run in parallel; 32 KiB is under half a millisecond of one S3 connection.
 */
const PROJECTION_GAP = 32 * 1024;

export interface QueryCaches {
  readonly footers: ObjectCache<SegmentFooter>;
  /** Footers as stored (compressed), for the parts a query reads by selection (footerEntries). */
  readonly footerBytes: ObjectCache<Uint8Array>;
  /**
   * Decoded blocks as columns (shredded fields as node columns, not as record objects): a warm
   * query pays neither decompression nor decoding, and the budget counts compact arrays.
   */
  readonly blocks: ObjectCache<BlockColumns>;
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
    /** Where the blocks of indexed parts are found without their footers. */
    private readonly index?: SeriesIndexStore,
    private readonly coalesceGap = COALESCE_GAP,
  ) {}

  /** Per selector and part: the entries footerEntries kept, least recently used first; at most PICKED_ENTRIES in all. */
  private readonly picks = new Map<string, readonly FooterEntry[]>();
  private pickedEntries = 0;

  /**
   * The footer entries of a part that a selector names (time range not applied). A part the
   * series index does not cover yet is read by selection (selectFooter): at 1 M series a part
   * holds ~60,000 entries, and decoding them all, then indexing them, for one query's few cost
   * ~50 ms of CPU per part. A selection's entries are kept, as the series index keeps its own
   * (parts never change), so a query asked again (a dashboard, an alert) reads no footer.
   */
  async footerEntries(entry: CatalogEntry, spec: QuerySpec): Promise<readonly FooterEntry[]> {
    const decoded = this.caches.footers.get(entry.key);
    if (decoded) return candidates(decoded, spec);
    const key = `${selectorKey(spec)}\u0000${entry.key}`;
    const picked = this.picks.get(key);
    if (picked) {
      this.picks.delete(key); // most recently used last
      this.picks.set(key, picked);
      return picked;
    }
    let bytes = this.caches.footerBytes.get(entry.key);
    if (!bytes) {
      bytes = await this.read(entry.key, entry.footerOffset, entry.footerLength);
      this.caches.footerBytes.set(entry.key, bytes, bytes.length);
    }
    const matchers = spec.matchers !== undefined && spec.matchers.length > 0;
    const found = selectFooter(bytes, { metric: spec.metric, equal: Object.entries(spec.tags), accept: matchers ? (_metric, tags) => selects(spec, tags) : undefined });
    if (found.length <= PICK_MAX_ENTRIES) {
      this.picks.set(key, found);
      this.pickedEntries += found.length;
      for (const [k, list] of this.picks) {
        if (this.pickedEntries <= PICKED_ENTRIES) break;
        this.picks.delete(k);
        this.pickedEntries -= list.length;
      }
    }
    return found;
  }

  async footer(entry: CatalogEntry): Promise<SegmentFooter> {
    const cached = this.caches.footers.get(entry.key);
    if (cached) return cached;
    const bytes = await this.read(entry.key, entry.footerOffset, entry.footerLength);
    const footer = decodeFooter(bytes);
    this.caches.footers.set(entry.key, footer, entry.footerLength * 3);
    return footer;
  }

  /**
   * Each wanted block, decoded into values; neighbouring blocks share one ranged GET. With
   * `paths` (a projection), each block keeps only those paths. Cached columns are shared between
   * queries, so callers must treat them as read-only.
   */
  async readBlocks(entry: CatalogEntry, wanted: readonly FooterEntry[], paths?: readonly string[]): Promise<SeriesColumns[]> {
    return (await this.readGroups(entry, wanted, paths)).map((groups) => (groups.length === 1 ? assemble(groups[0]!) : concatWindows(groups.map(assemble))));
  }

  /**
   * Each wanted block as decoded columns (readBlocks before any value is built): per block, its
   * row groups holding samples of `range` (all of them without one) in time order, or the whole
   * block when it has none (segment.md, "Row groups"). Only those groups' bytes are fetched and
   * decoded, and with `paths` only the chunks holding them. Decoded groups are cached one by one.
   */
  async readGroups(entry: CatalogEntry, wanted: readonly FooterEntry[], paths?: readonly string[], range?: { from: number; to: number }): Promise<BlockColumns[][]> {
    const out = wanted.map((s) => new Array<BlockColumns>(groupsOf(s, range?.from, range?.to).length));
    const projectedKey = paths ? `#${JSON.stringify(paths)}` : '';
    // Per block or row group to read: the ranges to fetch, and whether it is read projected (else whole).
    const missing: { i: number; slot: number; g: number; key: string; ranges: ByteRange[]; projected: boolean }[] = [];
    wanted.forEach((s, i) => {
      groupsOf(s, range?.from, range?.to).forEach((g, slot) => {
        const key = g < 0 ? `${entry.key}#${s.offset}` : `${entry.key}#${s.offset}@${g}`;
        const whole = this.caches.blocks.get(key);
        const hit = whole ? (paths ? projectBlockColumns(whole, paths) : whole) : paths ? this.caches.blocks.get(`${key}${projectedKey}`) : undefined;
        if (hit) out[i]![slot] = hit;
        else if (paths && s.directory) missing.push({ i, slot, g, key, ranges: columnRanges(s, paths, g < 0 ? undefined : g), projected: true });
        else missing.push({ i, slot, g, key, ranges: g < 0 ? [{ offset: s.offset, length: s.length }] : columnRanges(s, undefined, g), projected: false });
      });
    });
    // Close ranges share a GET (a run); a block is decoded once all its runs are in.
    const pieces = missing.flatMap((m, k) => m.ranges.map((r) => ({ k, ...r }))).sort((a, b) => a.offset - b.offset);
    const runs: { offset: number; end: number; wanted: number; blocks: Set<number>; bytes?: Uint8Array }[] = [];
    const runsOf = missing.map(() => new Set<number>());
    for (const p of pieces) {
      const run = runs[runs.length - 1];
      // A projection skips a gap larger than what the run wants so far: the row groups of a block
      // put the chunks of other paths between its groups' small gaps, and reading them would
      // cost a bulk read more bytes than it saves requests.
      const gap = Math.min(this.coalesceGap, missing[p.k]!.projected ? Math.min(PROJECTION_GAP, run?.wanted ?? 0) : COALESCE_GAP);
      if (run && p.offset - run.end <= gap) {
        run.end = Math.max(run.end, p.offset + p.length);
        run.wanted += p.length;
        run.blocks.add(p.k);
      } else runs.push({ offset: p.offset, end: p.offset + p.length, wanted: p.length, blocks: new Set([p.k]) });
      runsOf[p.k]!.add(runs.length - 1);
    }
    const decode = (k: number) => {
      const m = missing[k]!;
      const s = wanted[m.i]!;
      const bytes = this.assembleRanges(m.ranges, [...runsOf[k]!].map((r) => runs[r]!));
      const at = m.ranges[0]!.offset;
      const columns = m.g < 0 ? decodeBlockColumns(bytes, s, m.projected ? paths : undefined, at) : decodeGroupColumns(bytes, s, m.g, m.projected ? paths : undefined, at);
      this.caches.blocks.set(m.projected ? `${m.key}${projectedKey}` : m.key, columns, blockColumnsBytes(columns));
      out[m.i]![m.slot] = paths && !m.projected ? projectBlockColumns(columns, paths) : columns;
      // A run's bytes are dropped once every block reading from it is decoded.
      for (const r of runsOf[k]!) {
        runs[r]!.blocks.delete(k);
        if (runs[r]!.blocks.size === 0) delete runs[r]!.bytes;
      }
    };
    await mapLimit(runs, 8, async (run) => {
      run.bytes = await this.read(entry.key, run.offset, run.end - run.offset);
      for (const k of [...run.blocks]) if ([...runsOf[k]!].every((r) => runs[r]!.bytes)) decode(k);
    });
    return out;
  }

  /**
   * One buffer starting at the first range's offset: a view into the run when one run holds every
   * range (the usual case), else a copy with each range in place and the gaps left as zeros, which
   * the decoder never reads.
   */
  private assembleRanges(ranges: readonly ByteRange[], runs: readonly { offset: number; end: number; bytes?: Uint8Array }[]): Uint8Array {
    const start = ranges[0]!.offset;
    const last = ranges[ranges.length - 1]!;
    const end = last.offset + last.length;
    if (runs.length === 1) return runs[0]!.bytes!.subarray(start - runs[0]!.offset, end - runs[0]!.offset);
    const out = new Uint8Array(end - start);
    for (const r of ranges) {
      const run = runs.find((x) => r.offset >= x.offset && r.offset + r.length <= x.end)!;
      out.set(run.bytes!.subarray(r.offset - run.offset, r.offset - run.offset + r.length), r.offset - start);
    }
    return out;
  }

  /**
   * The footer entries of a part that may match the selector (time range not applied; inSpec
   * says which do), from the series index when it covers the part, else from the footer.
   */
  async listed(entry: CatalogEntry, spec: QuerySpec): Promise<readonly FooterEntry[]> {
    // A day object's entries are not in the series index (it indexes hour parts): its footer says.
    return (isDaySegmentKey(entry.key) ? undefined : await this.index?.blocks(entry, spec)) ?? (await this.footerEntries(entry, spec));
  }

  /**
   * Per matching series and window: the raw sources in ascending precedence (parts in the order
   * given, then hot logs). Series in `skip` are not read from the parts, nor those `keep` refuses
   * for the part's window.
   */
  async sources(
    spec: QuerySpec,
    entries: readonly CatalogEntry[],
    logs: readonly HotLog[],
    skip?: ReadonlyMap<string, unknown>,
    keep?: (id: string, window: number) => boolean,
  ): Promise<RawSources> {
    const bySeries: RawSources = new Map();
    const sourcesOf = (id: string, key: SeriesKey, window: number) => {
      let s = bySeries.get(id);
      if (!s) bySeries.set(id, (s = { key, windows: new Map() }));
      let list = s.windows.get(window);
      if (!list) s.windows.set(window, (list = []));
      return list;
    };
    // A day object is listed once per hour window it holds (keys.md, "Day fold"): it is read
    // once, and each of its entries contributes the samples of its own window only.
    const windowsOf = new Map<string, number[]>();
    for (const e of entries) windowsOf.set(e.key, [...(windowsOf.get(e.key) ?? []), e.window]);
    const reads = new Map<string, Promise<{ wanted: FooterEntry[]; blocks: BlockColumns[][] }>>();
    const readOnce = (entry: CatalogEntry) => {
      let read = reads.get(entry.key);
      if (!read) {
        const windows = windowsOf.get(entry.key)!;
        read = (async () => {
          const list = await this.listed(entry, spec);
          const wanted = list.filter((s) => !skip?.has(s.id) && (!keep || windows.some((w) => keep(s.id, w))) && inSpec(s, spec));
          return { wanted, blocks: await this.readGroups(entry, wanted, spec.fields, spec) };
        })();
        reads.set(entry.key, read);
      }
      return read;
    };
    const perEntry = await mapLimit(entries, Math.max(1, Math.ceil(this.concurrency / 2)), async (entry) => ({ entry, ...(await readOnce(entry)) }));
    // Insert in catalog order (window, fence, part), so precedence is right whatever finished first.
    for (const { entry, wanted, blocks } of perEntry) {
      const day = isDaySegmentKey(entry.key);
      wanted.forEach((s, i) => {
        if (keep && !keep(s.id, entry.window)) return;
        // Row groups of one block hold disjoint slots of time: sources that a merge never has to overrule.
        for (const group of blocks[i]!) {
          if (!day) {
            // Cut to the range first: a latest read, or an hour's last minutes, then builds the values it keeps only.
            const cut = sliceColumns(group, lowerBound(group.ts, spec.from), lowerBound(group.ts, spec.to));
            if (cut.ts.length > 0) sourcesOf(s.id, { metric: s.metric, tags: s.tags }, entry.window).push(blockSource(cut));
            continue;
          }
          const data = clip(assemble(group), entry.window, entry.window + WINDOW_MS);
          if (data.ts.length > 0) sourcesOf(s.id, { metric: s.metric, tags: s.tags }, entry.window).push({ data, sortedUnique: true });
        }
      });
    }
    for (const log of logs) {
      if (!selects(spec, log.key.tags)) continue;
      const data = decodeRecords(log.data);
      sourcesOf(log.id, log.key, log.window).push({ data: spec.fields ? projectColumns(data, spec.fields) : data, sortedUnique: false });
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

/** Whether a listed entry is of the spec's metric and selector and has samples around its range. */
export function inSpec(s: FooterEntry, spec: QuerySpec): boolean {
  return s.metric === spec.metric && selects(spec, s.tags) && s.maxTs >= spec.from && s.minTs < spec.to;
}

/**
 * One series' windows merged (newest source wins per timestamp), concatenated, clipped to the
 * spec. `fields` are projection paths (format's shredding.md): sources read by `sources` are
 * already projected, so the columns kept are the fields the paths select.
 */
export function mergeWindows(windows: Map<number, Source[]>, spec: QuerySpec, fields: readonly string[] | undefined): SeriesColumns {
  const parts = [...windows.keys()].sort((a, b) => a - b).map((w) => mergeSources(windows.get(w)!));
  const data = concatWindows(parts);
  return clip(data, spec.from, spec.to, fields ? [...selectPaths(fields, new Set(Object.keys(data.fields))).keys()] : undefined);
}

/** A block as a merge source: its values are built only if a merge needs them. */
export function blockSource(columns: BlockColumns): Source {
  let data: SeriesColumns | undefined;
  return {
    columns,
    sortedUnique: true,
    get data() {
      return (data ??= assemble(columns));
    },
  };
}
