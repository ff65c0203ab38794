import { CorruptDataError, WINDOW_MS, isDaySegmentKey, nameMap, type FieldValue, type ObjectStore, type SeriesColumns, type SeriesData } from '@s4/core';
import { SEGMENT_MAGIC, SEGMENT_TRAILER_BYTES, decodeBlock, decodeFooter, decodeSegment, readTrailer, type CatalogEntry, type FooterEntry, type SegmentFooter, type SegmentSeriesInput } from '@s4/format';
import { clip, mergeSources, type Source } from '../columns/merge.js';
import { mapLimit } from '../concurrency.js';
import { spanOf } from '../catalog/catalog-store.js';
import { tombstonesOf, withoutDeleted, type Tombstone } from '../deletes/tombstones.js';

/** Where a part stands among a window's parts: later wins. The order every reader merges in. */
export interface Position {
  readonly fence: number;
  readonly part: number;
}

/** Precedence of parts within one window, as readers apply it: by fence, then part number. */
export function byPrecedence(a: Position, b: Position): number {
  return a.fence - b.fence || a.part - b.part;
}

/**
 * The series of one catalog entry, whole: a part's, or of a day object only the samples of the
 * entry's window (a day object is listed once per window it holds, keys.md "Day fold").
 */
export async function readPart(objects: ObjectStore, entry: CatalogEntry, cache?: Map<string, Promise<SeriesData[]>>): Promise<SeriesData[]> {
  const day = isDaySegmentKey(entry.key);
  // Only day objects are kept in `cache` (they serve every window of their day); hour parts are read once anyway.
  let read = day ? cache?.get(entry.key) : undefined;
  if (!read) {
    read = objects.get(entry.key).then((got) => {
      if (!got || got.notModified) throw new Error(`segment ${entry.key} is registered in the catalog but missing from the object store`);
      return decodeSegment(got.body).series;
    });
    if (day) cache?.set(entry.key, read);
  }
  const series = await read;
  if (!day) return series;
  return series.map((s) => ({ ...s, ...clip(s, entry.window, entry.window + WINDOW_MS) })).filter((s) => s.ts.length > 0);
}

/** A segment object's footer beside its bytes, no block decoded yet. */
export interface SegmentBytes {
  readonly footer: SegmentFooter;
  readonly bytes: Uint8Array;
}

/**
 * One catalog entry's object, opened: its series as footer entries, each decoded only when asked.
 * A window's parts are held as their compressed bytes and its series decoded one at a time: a
 * whole decoded window of nested records is a few GB of object graphs where its bytes are tens of
 * MB (docs/benchmarks.md, "Server memory").
 */
export interface OpenedPart {
  /** Series that may have samples in the entry's window (of a day object, those whose span meets it). */
  readonly entries: readonly FooterEntry[];
  /** One entry's samples (of a day object, only those of the catalog entry's window). */
  series(e: FooterEntry): SeriesColumns;
}

export async function openPart(objects: ObjectStore, entry: CatalogEntry, cache?: Map<string, Promise<SegmentBytes>>): Promise<OpenedPart> {
  const day = isDaySegmentKey(entry.key);
  // Only day objects are kept in `cache` (they serve every window of their day); hour parts are read once anyway.
  let read = day ? cache?.get(entry.key) : undefined;
  if (!read) {
    read = objects.get(entry.key).then((got) => {
      if (!got || got.notModified) throw new Error(`segment ${entry.key} is registered in the catalog but missing from the object store`);
      return segmentBytes(got.body);
    });
    if (day) cache?.set(entry.key, read);
  }
  const { footer, bytes } = await read;
  const from = entry.window;
  const to = entry.window + WINDOW_MS;
  return {
    entries: day ? footer.series.filter((e) => e.count > 0 && e.maxTs >= from && e.minTs < to) : footer.series,
    series(e) {
      const cols = decodeBlock(bytes.subarray(e.offset, e.offset + e.length), e);
      return day ? clip(cols, from, to) : cols;
    },
  };
}

/** The footer of a whole segment object, with the checks decodeSegment makes before its blocks. */
function segmentBytes(bytes: Uint8Array): SegmentBytes {
  const what = 'segment';
  if (bytes.length < SEGMENT_MAGIC.length + SEGMENT_TRAILER_BYTES || SEGMENT_MAGIC.some((b, i) => bytes[i] !== b)) throw new CorruptDataError(what, 'header magic "S4SG" missing or too short');
  const { footerOffset, footerLength, version } = readTrailer(bytes);
  const footerEnd = bytes.length - SEGMENT_TRAILER_BYTES;
  if (bytes[4] !== version || footerOffset + footerLength !== footerEnd) throw new CorruptDataError(what, `header, trailer and footer disagree (footer at ${footerOffset}+${footerLength})`);
  const footer = decodeFooter(bytes.subarray(footerOffset, footerEnd));
  for (const e of footer.series) if (e.offset + e.length > footerOffset) throw new CorruptDataError(what, `block of ${e.id} runs into the footer`);
  return { footer, bytes };
}

export interface Folded {
  /** Every series of the parts, merged newest-wins, sorted by id; all-null columns left out. */
  readonly series: SegmentSeriesInput[];
  readonly samples: number;
  readonly minTs: number;
  readonly maxTs: number;
}

/**
 * Read whole parts of one window (one GET each) and merge them per series exactly as a query
 * does: parts in precedence order, the later part winning at an equal timestamp.
 */
export async function foldParts(objects: ObjectStore, parts: readonly CatalogEntry[], concurrency = 4, deleted: readonly Tombstone[] = [], reads?: Map<string, Promise<SeriesData[]>>): Promise<Folded> {
  const ordered = [...parts].sort(byPrecedence);
  const decoded = await mapLimit(ordered, concurrency, (part) => readPart(objects, part, reads));
  const bySeries = new Map<string, { metric: string; tags: Record<string, string>; sources: Source[] }>();
  // Inserted in precedence order whatever order the reads finished in.
  for (const series of decoded) {
    for (const s of series) {
      let entry = bySeries.get(s.id);
      if (!entry) bySeries.set(s.id, (entry = { metric: s.metric, tags: s.tags, sources: [] }));
      entry.sources.push({ data: { ts: s.ts, fields: s.fields }, sortedUnique: true });
    }
  }
  const series: SegmentSeriesInput[] = [];
  for (const [id, { metric, tags, sources }] of bySeries) {
    // Deleted samples (tombstones) are left out of the rewrite: deletes reach the objects here.
    const merged = withoutDeleted(mergeSources(sources), { metric, tags }, deleted);
    const n = merged.ts.length;
    if (n === 0) continue;
    const fields = nameMap<FieldValue[]>();
    // A column that is null throughout reads the same as an absent one, in every reader.
    for (const [f, col] of Object.entries(merged.fields)) if (col.some((v) => v !== null)) fields[f] = col;
    series.push({ id, metric, tags, ts: merged.ts, fields });
  }
  series.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  return { series, ...spanOf(series) };
}

/** A window's fold as the encoder reads it: `span()` once encoding has read every series. */
export interface LazyFold {
  readonly series: SegmentSeriesInput[];
  span(): Pick<Folded, 'samples' | 'minTs' | 'maxTs'>;
}

/**
 * foldParts for a window that is encoded once and dropped (the compactor's window fold): the
 * parts are held as their bytes and each series merged only when the encoder reads it (once, in
 * id order, `ts` then `fields`), so the fold holds one series decoded instead of the window's (a
 * window of nested records decoded whole is hundreds of MB of objects). Same series, columns and
 * order as foldParts.
 */
export async function foldWindow(objects: ObjectStore, parts: readonly CatalogEntry[], concurrency = 4, deleted: readonly Tombstone[] = []): Promise<LazyFold> {
  const ordered = [...parts].sort(byPrecedence);
  const opened = await mapLimit(ordered, concurrency, (part) => openPart(objects, part));
  interface Pending {
    readonly id: string;
    readonly metric: string;
    readonly tags: Record<string, string>;
    readonly blocks: { part: OpenedPart; entry: FooterEntry }[];
    /** It has samples in an hour part, so it keeps some unless a tombstone of its own takes them. */
    hasSamples: boolean;
  }
  const bySeries = new Map<string, Pending>();
  // Blocks in precedence order whatever order the reads finished in.
  opened.forEach((part, i) => {
    const day = isDaySegmentKey(ordered[i]!.key);
    for (const entry of part.entries) {
      let s = bySeries.get(entry.id);
      if (!s) bySeries.set(entry.id, (s = { id: entry.id, metric: entry.metric, tags: entry.tags, blocks: [], hasSamples: false }));
      s.blocks.push({ part, entry });
      if (!day && entry.count > 0) s.hasSamples = true;
    }
  });
  const spans = new Map<string, { samples: number; minTs: number; maxTs: number }>();
  let last: { s: Pending; columns: SeriesColumns } | null = null;
  const merge = (s: Pending): SeriesColumns => {
    if (last?.s === s) return last.columns;
    const merged = withoutDeleted(mergeSources(s.blocks.map((b) => ({ data: b.part.series(b.entry), sortedUnique: true }))), s, deleted);
    const fields = nameMap<FieldValue[]>();
    // A column that is null throughout reads the same as an absent one, in every reader.
    for (const [f, col] of Object.entries(merged.fields)) if (col.some((v) => v !== null)) fields[f] = col;
    const n = merged.ts.length;
    spans.set(s.id, { samples: n, minTs: n > 0 ? merged.ts[0]! : 0, maxTs: n > 0 ? merged.ts[n - 1]! : 0 });
    last = { s, columns: { ts: merged.ts, fields } };
    return last.columns;
  };
  const series: SegmentSeriesInput[] = [];
  for (const s of [...bySeries.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))) {
    // A series left without samples (deleted, or clipped out of a day object) is dropped: only
    // those that might be are decoded ahead to know.
    if (!(s.hasSamples && tombstonesOf(s, deleted).length === 0) && merge(s).ts.length === 0) continue;
    series.push({
      id: s.id,
      metric: s.metric,
      tags: s.tags,
      get ts() {
        return merge(s).ts;
      },
      get fields() {
        return merge(s).fields;
      },
    });
  }
  return {
    series,
    span() {
      last = null;
      let samples = 0;
      let minTs = Infinity;
      let maxTs = -Infinity;
      for (const s of series) {
        if (!spans.has(s.id)) merge(bySeries.get(s.id)!);
        const x = spans.get(s.id)!;
        if (x.samples === 0) continue;
        samples += x.samples;
        minTs = Math.min(minTs, x.minTs);
        maxTs = Math.max(maxTs, x.maxTs);
      }
      last = null;
      return { samples, minTs, maxTs };
    },
  };
}
