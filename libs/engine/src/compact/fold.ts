import { WINDOW_MS, isDaySegmentKey, nameMap, type FieldValue, type ObjectStore, type SeriesColumns } from '@s4/core';
import { assemble, decodeBlock, decodeBlockColumns, decodeGroupColumns, groupsOf, numberColumns, readSegmentFooter, ROOTS_ONLY, type CatalogEntry, type FooterEntry, type SegmentFooter, type SegmentSeriesInput } from '@s4/format';
import { clip, concatWindows, mergeSources } from '../columns/merge.js';
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
  /** The same samples' numbers only, as rollups aggregate them (numberColumns): nested records are not rebuilt. */
  numbers(e: FooterEntry): SeriesColumns;
}

export async function openPart(objects: ObjectStore, entry: CatalogEntry, cache?: Map<string, Promise<SegmentBytes>>): Promise<OpenedPart> {
  const day = isDaySegmentKey(entry.key);
  // Only day objects are kept in `cache` (they serve every window of their day); hour parts are read once anyway.
  let read = day ? cache?.get(entry.key) : undefined;
  if (!read) {
    read = objects.get(entry.key).then((got) => {
      if (!got || got.notModified) throw new Error(`segment ${entry.key} is registered in the catalog but missing from the object store`);
      return { footer: readSegmentFooter(got.body), bytes: got.body };
    });
    if (day) cache?.set(entry.key, read);
  }
  const { footer, bytes } = await read;
  const from = entry.window;
  const to = entry.window + WINDOW_MS;
  const series = (e: FooterEntry): SeriesColumns => {
    const groups = day ? groupsOf(e, from, to) : [-1];
    // Of a day object's block with row groups, only those meeting the window are decoded: a day
    // fold or a rollup opens the day object once per window of its day.
    const cols = groups[0] === -1 ? decodeBlock(bytes.subarray(e.offset, e.offset + e.length), e) : concatWindows(groups.map((g) => assemble(decodeGroupColumns(bytes, e, g, undefined, 0))));
    return day ? clip(cols, from, to) : cols;
  };
  return {
    entries: day ? footer.series.filter((e) => e.count > 0 && e.maxTs >= from && e.minTs < to) : footer.series,
    series,
    numbers(e) {
      if (!e.directory) return series(e);
      const groups = day ? groupsOf(e, from, to) : groupsOf(e);
      const cols = groups[0] === -1 ? numberColumns(decodeBlockColumns(bytes, e, ROOTS_ONLY, 0)) : concatWindows(groups.map((g) => numberColumns(decodeGroupColumns(bytes, e, g, ROOTS_ONLY, 0))));
      return day ? clip(cols, from, to) : cols;
    },
  };
}

export interface Folded {
  /** Every series of the parts, merged newest-wins, sorted by id; all-null columns left out. */
  readonly series: SegmentSeriesInput[];
  readonly samples: number;
  readonly minTs: number;
  readonly maxTs: number;
}

/** One series of a window: its blocks in the window's parts, in precedence order. */
export interface WindowSeries {
  readonly id: string;
  readonly metric: string;
  readonly tags: Record<string, string>;
  readonly blocks: { readonly part: OpenedPart; readonly entry: FooterEntry; readonly day: boolean }[];
}

/**
 * A window's parts opened (one GET each, held as bytes) and their blocks grouped by series, in
 * precedence order whatever order the reads finished in: what a fold or a rollup of the window
 * merges, one series at a time.
 */
export async function openWindow(objects: ObjectStore, parts: readonly CatalogEntry[], concurrency = 4, cache?: Map<string, Promise<SegmentBytes>>): Promise<Map<string, WindowSeries>> {
  const ordered = [...parts].sort(byPrecedence);
  const opened = await mapLimit(ordered, concurrency, (part) => openPart(objects, part, cache));
  const bySeries = new Map<string, WindowSeries>();
  opened.forEach((part, i) => {
    const day = isDaySegmentKey(ordered[i]!.key);
    for (const entry of part.entries) {
      let s = bySeries.get(entry.id);
      if (!s) bySeries.set(entry.id, (s = { id: entry.id, metric: entry.metric, tags: entry.tags, blocks: [] }));
      s.blocks.push({ part, entry, day });
    }
  });
  return bySeries;
}

/**
 * Parts of one window merged per series exactly as a query merges them: parts in precedence
 * order, the later part winning at an equal timestamp, deleted samples left out.
 */
export async function foldParts(objects: ObjectStore, parts: readonly CatalogEntry[], concurrency = 4, deleted: readonly Tombstone[] = [], cache?: Map<string, Promise<SegmentBytes>>): Promise<Folded> {
  const lazy = await foldWindow(objects, parts, concurrency, deleted, cache);
  // Read in the encoder's order (ts, then fields), so each series is merged once.
  const series = lazy.series.map((s) => ({ id: s.id, metric: s.metric, tags: s.tags, ts: s.ts, fields: s.fields }));
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
 * window of nested records decoded whole is hundreds of MB of objects).
 */
export async function foldWindow(objects: ObjectStore, parts: readonly CatalogEntry[], concurrency = 4, deleted: readonly Tombstone[] = [], cache?: Map<string, Promise<SegmentBytes>>): Promise<LazyFold> {
  const bySeries = await openWindow(objects, parts, concurrency, cache);
  const spans = new Map<string, { samples: number; minTs: number; maxTs: number }>();
  let last: { s: WindowSeries; columns: SeriesColumns } | null = null;
  const merge = (s: WindowSeries): SeriesColumns => {
    if (last?.s === s) return last.columns;
    // Deleted samples (tombstones) are left out of the rewrite: deletes reach the objects here.
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
    // A series with samples in an hour part keeps some unless a tombstone of its own takes them;
    // any other (deleted, or clipped out of a day object) is decoded ahead to know, and dropped when empty.
    const keeps = s.blocks.some((b) => !b.day && b.entry.count > 0) && tombstonesOf(s, deleted).length === 0;
    if (!keeps && merge(s).ts.length === 0) continue;
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
