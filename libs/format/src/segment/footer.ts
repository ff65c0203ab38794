import { ByteReader, ByteWriter, setOwn } from '../codec/bytes.js';
import { decodeFrame, encodeFrame, FRAME_OVERHEAD } from '../codec/frame.js';
import { assertWellFormed } from '../codec/values.js';
import { asCorrupt } from './checks.js';
import { indexLayout, layoutKey } from './layout.js';
import { ColumnRole, type BlockLayout, type FooterEntry, type LayoutColumn, type SegmentFooter } from './types.js';

/** The version writers write; readers also accept every earlier one (SEGMENT_VERSIONS). */
export const SEGMENT_VERSION = 4;
export const SEGMENT_VERSIONS: readonly number[] = [1, 2, 3, 4];
/** "S4SG" then version u8 then three zero bytes. */
export const SEGMENT_HEADER_BYTES = 8;
const WHAT = 'segment footer';

/**
 * Footer payload: metric names, tag keys and values and field names are stored once in a string
 * table and referenced by index, because thousands of series of one shard repeat them.
 *   version u8 | ns str | shard uvarint | window svarint | #strings uvarint | strings
 *   | [v2: #layouts uvarint | layout…] | #series uvarint | entries
 * layout (v2): #chunks uvarint | (#columns uvarint | (role u8 | [path ref unless role 0])…)…
 * layout (v3, row groups): 0 uvarint | span uvarint | #groups uvarint
 *   | (slot step uvarint | #chunks uvarint | chunks as above)… — a v3 footer may hold both kinds
 * entry: id str | metric ref | #tags uvarint | (key ref, value ref)… | offset uvarint
 *   | length uvarint | count uvarint | minTs svarint | maxTs svarint | then
 *   v1: #fields uvarint | field ref…
 *   v2: layout uvarint | chunk length uvarint × #chunks
 * Distinct layouts are stored once: the series of a shard mostly share one, and an entry then
 * costs its chunk lengths only.
 */
export function encodeFooter(footer: SegmentFooter, level?: number): Uint8Array {
  const table = new Map<string, number>();
  const ref = (s: string) => {
    let i = table.get(s);
    if (i === undefined) {
      assertWellFormed(s);
      i = table.size;
      table.set(s, i);
    }
    return i;
  };
  const layouts: BlockLayout[] = [];
  const layoutIds = new Map<string, number>();
  let lastLayout = -1;
  const entries = new ByteWriter(footer.series.length * 48 + 64);
  for (const e of footer.series) {
    assertWellFormed(e.id);
    entries.str(e.id);
    entries.uvarint(ref(e.metric));
    const keys = Object.keys(e.tags).sort();
    entries.uvarint(keys.length);
    for (const k of keys) {
      entries.uvarint(ref(k));
      entries.uvarint(ref(e.tags[k]!));
    }
    entries.uvarint(e.offset);
    entries.uvarint(e.length);
    entries.uvarint(e.count);
    entries.svarint(e.minTs);
    entries.svarint(e.maxTs);
    if (footer.version === 1) {
      entries.uvarint(e.fields.length);
      for (const f of e.fields) entries.uvarint(ref(f));
      continue;
    }
    const d = e.directory;
    if (!d) throw new RangeError(`series ${e.id}: a version ${footer.version} footer entry needs its column directory`);
    // Consecutive series mostly share a layout: compared with the last one's before a key is built.
    let li: number | undefined;
    if (lastLayout >= 0 && sameLayout(d.layout, layouts[lastLayout]!)) li = lastLayout;
    else {
      const key = layoutKey(d.layout);
      li = layoutIds.get(key);
      if (li === undefined) {
        li = layouts.length;
        layoutIds.set(key, li);
        layouts.push(d.layout);
      }
    }
    lastLayout = li;
    if (d.chunkLengths.length !== d.layout.chunks.length) throw new RangeError(`series ${e.id}: ${d.chunkLengths.length} chunk lengths for a layout of ${d.layout.chunks.length} chunks`);
    entries.uvarint(li);
    for (const len of d.chunkLengths) entries.uvarint(len);
  }
  const lw = new ByteWriter(256);
  if (footer.version >= 2) writeLayouts(lw, layouts, ref);
  const w = new ByteWriter(entries.pos + lw.pos + 1024);
  w.u8(footer.version);
  assertWellFormed(footer.ns);
  w.str(footer.ns);
  w.uvarint(footer.shard);
  w.svarint(footer.window);
  w.uvarint(table.size);
  for (const s of table.keys()) w.str(s);
  w.bytes(lw.written());
  w.uvarint(footer.series.length);
  w.bytes(entries.written());
  return encodeFrame(w.written(), level);
}

/** Whether two layouts have the same key (layoutKey), without building either. */
function sameLayout(a: BlockLayout, b: BlockLayout): boolean {
  if (a === b) return true;
  if (a.chunks.length !== b.chunks.length || !a.groups !== !b.groups) return false;
  for (let c = 0; c < a.chunks.length; c++) {
    const x = a.chunks[c]!;
    const y = b.chunks[c]!;
    if (x.length !== y.length) return false;
    for (let k = 0; k < x.length; k++) if (x[k]!.role !== y[k]!.role || x[k]!.path !== y[k]!.path) return false;
  }
  if (!a.groups || !b.groups) return true;
  const g = a.groups;
  const h = b.groups;
  return g.span === h.span && sameNumbers(g.slots, h.slots) && sameNumbers(g.firstChunk, h.firstChunk);
}

function sameNumbers(a: readonly number[], b: readonly number[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

/** Decodes the footerLength bytes at footerOffset; checksum-verified. */
export function decodeFooter(bytes: Uint8Array): SegmentFooter {
  return readFooter(bytes, undefined);
}

/**
 * Which entries selectFooter keeps: those of `metric` (any when undefined) whose tags hold every
 * one of `equal`, then those `accept` takes (it sees the entry's decoded key).
 */
export interface FooterWant {
  readonly metric: string | undefined;
  readonly equal: readonly (readonly [string, string])[];
  readonly accept?: (metric: string, tags: Record<string, string>) => boolean;
}

/**
 * The entries decodeFooter would return that `want` keeps, without decoding the others: a query of
 * a few series in a part of 60,000 (a shard at 1 M series) compares string-table references as
 * numbers, and builds the ids, tags and directories of the entries it keeps only. The checks that
 * need an entry's strings (ids and tag keys in order) are made for kept entries; the frame's
 * checksum covers the rest.
 */
export function selectFooter(bytes: Uint8Array, want: FooterWant): FooterEntry[] {
  return readFooter(bytes, want).series;
}

function readFooter(bytes: Uint8Array, want: FooterWant | undefined): SegmentFooter {
  try {
    const r = new ByteReader(decodeFrame(bytes, WHAT), WHAT);
    const version = r.u8();
    if (!SEGMENT_VERSIONS.includes(version)) r.fail(`unsupported footer version ${version}`);
    const ns = r.str();
    const shard = r.uvarint();
    const window = r.svarint();
    const nStrings = r.count();
    // A whole decode makes every string now; a selection notes where each is, and makes those its kept entries name.
    const table = new Array<string | undefined>(nStrings);
    const wanted = want ? wantedStrings(want) : null;
    const at = wanted ? new Int32Array(nStrings) : null;
    for (let i = 0; i < nStrings; i++) {
      if (!at) {
        table[i] = r.str();
        continue;
      }
      at[i] = r.pos;
      const len = r.uvarint();
      r.need(len);
      wanted!.see(r.buf, r.pos, len, i);
      r.pos += len;
    }
    const stringAt = (i: number): string => {
      let s = table[i];
      if (s === undefined) {
        const back = r.pos;
        r.pos = at![i]!;
        table[i] = s = r.str();
        r.pos = back;
      }
      return s;
    };
    const derefIndex = () => {
      const i = r.uvarint();
      if (i >= nStrings) r.fail(`string ref ${i} outside a table of ${nStrings}`);
      return i;
    };
    const deref = () => stringAt(derefIndex());
    const layouts = version >= 2 ? readLayouts(r, deref) : [];
    if (version < 3 && layouts.some((l) => l.groups)) r.fail(`a version ${version} footer with row groups`);
    const series: FooterEntry[] = [];
    // A wanted name the table lacks: no entry can be kept.
    if (wanted && !wanted.complete()) return { version, ns, shard, window, series };
    const nSeries = r.count(8);
    let prevId: string | null = null;
    let prevEnd = SEGMENT_HEADER_BYTES;
    for (let s = 0; s < nSeries; s++) {
      let id: string;
      let metric: string;
      let tags: Record<string, string>;
      if (!wanted) ({ id, metric, tags } = readSeriesKey(r, prevId, deref));
      else {
        const keyAt = r.pos;
        const idLength = r.uvarint();
        r.need(idLength);
        r.pos += idLength;
        const kept = wanted.keeps(derefIndex(), r, derefIndex);
        if (!kept) {
          skipEntry(r, version, layouts, derefIndex);
          continue;
        }
        const back = r.pos;
        r.pos = keyAt;
        ({ id, metric, tags } = readSeriesKey(r, null, deref));
        r.pos = back;
      }
      prevId = id;
      const offset = r.uvarint();
      const length = r.uvarint();
      const count = r.uvarint();
      const minTs = r.svarint();
      const maxTs = r.svarint();
      if (offset < prevEnd && !wanted) r.fail(`series ${id}: block at ${offset} overlaps the previous one`);
      if (minTs > maxTs) r.fail(`series ${id}: minTs ${minTs} after maxTs ${maxTs}`);
      prevEnd = offset + length;
      let entry: FooterEntry;
      if (version === 1) {
        const nFields = r.count();
        const fields: string[] = [];
        for (let f = 0; f < nFields; f++) fields.push(deref());
        entry = { id, metric, tags, offset, length, count, minTs, maxTs, fields };
      } else {
        const li = r.uvarint();
        if (li >= layouts.length) r.fail(`series ${id}: layout ${li} outside ${layouts.length}`);
        const layout = layouts[li]!;
        const index = indexLayout(layout);
        const chunkLengths = new Array<number>(layout.chunks.length);
        let total = 0;
        for (let c = 0; c < chunkLengths.length; c++) {
          const len = r.uvarint();
          if (len < FRAME_OVERHEAD) r.fail(`series ${id}: chunk of ${len} bytes is shorter than a frame`);
          chunkLengths[c] = len;
          total += len;
        }
        if (total !== length) r.fail(`series ${id}: chunks of ${total} bytes in a block of ${length}`);
        entry = { id, metric, tags, offset, length, count, minTs, maxTs, fields: index.fields as string[], directory: { layout, chunkLengths } };
      }
      if (!want?.accept || want.accept(metric, tags)) series.push(entry);
    }
    if (!wanted) r.done();
    return { version, ns, shard, window, series };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}

/** Steps over the rest of an entry selectFooter does not keep (after its key), its bounds still checked. */
function skipEntry(r: ByteReader, version: number, layouts: readonly BlockLayout[], derefIndex: () => number): void {
  r.uvarint(); // offset
  r.uvarint(); // length
  r.uvarint(); // count
  r.svarint(); // minTs
  r.svarint(); // maxTs
  if (version === 1) {
    const nFields = r.count();
    for (let f = 0; f < nFields; f++) derefIndex();
    return;
  }
  const li = r.uvarint();
  if (li >= layouts.length) r.fail(`layout ${li} outside ${layouts.length}`);
  for (let c = layouts[li]!.chunks.length; c > 0; c--) r.uvarint();
}

/**
 * The names a FooterWant compares, found in the string table by their UTF-8 bytes (the table
 * holds each string once), so that entries are then tested by reference.
 */
function wantedStrings(want: FooterWant) {
  const names = [want.metric ?? '', ...want.equal.flat()];
  // A name that is not well-formed UTF-16 is never stored (assertWellFormed), and its UTF-8 would compare as U+FFFD.
  const storable = names.every((n) => n.isWellFormed());
  const bytes = names.map((n) => utf8.encode(n));
  const refs = new Int32Array(names.length).fill(-1);
  const anyMetric = want.metric === undefined;
  if (anyMetric) refs[0] = 0;
  const pairs = want.equal.length;
  return {
    see(buf: Uint8Array, start: number, len: number, i: number): void {
      for (let j = anyMetric ? 1 : 0; j < bytes.length; j++) {
        const b = bytes[j]!;
        if (refs[j] !== -1 || b.length !== len) continue;
        let k = 0;
        while (k < len && buf[start + k] === b[k]) k++;
        if (k === len) refs[j] = i;
      }
    },
    complete: () => storable && refs.every((x) => x !== -1),
    /** Whether an entry of this metric reference, whose tag pairs the reader is at, holds every wanted one; reads the pairs. */
    keeps(metricRef: number, r: ByteReader, derefIndex: () => number): boolean {
      let ok = anyMetric || metricRef === refs[0];
      const nTags = r.count(2);
      let held = 0;
      for (let t = 0; t < nTags; t++) {
        const k = derefIndex();
        const v = derefIndex();
        for (let j = 0; j < pairs; j++) if (refs[1 + 2 * j] === k && refs[2 + 2 * j] === v) held++;
      }
      if (held < pairs) ok = false;
      return ok;
    },
  };
}

const utf8 = new TextEncoder();

/**
 * Distinct block layouts, each as `#chunks | (#columns | (role u8 | [path ref unless role 0])…)…`
 * after their count; a row-grouped one as `0 | span | #groups | (slot step | #chunks | chunks)…`
 * (a plain layout has at least one chunk, so the 0 tells them apart).
 */
export function writeLayouts(w: ByteWriter, layouts: readonly BlockLayout[], ref: (s: string) => number): void {
  const chunks = (list: readonly (readonly LayoutColumn[])[]) => {
    for (const chunk of list) {
      w.uvarint(chunk.length);
      for (const col of chunk) {
        w.u8(col.role);
        if (col.role !== ColumnRole.Timestamps) w.uvarint(ref(col.path));
      }
    }
  };
  w.uvarint(layouts.length);
  for (const l of layouts) {
    indexLayout(l);
    const g = l.groups;
    if (!g) {
      w.uvarint(l.chunks.length);
      chunks(l.chunks);
      continue;
    }
    w.uvarint(0);
    w.uvarint(g.span);
    w.uvarint(g.slots.length);
    for (let i = 0; i < g.slots.length; i++) {
      w.uvarint(i === 0 ? 0 : g.slots[i]! - g.slots[i - 1]!);
      w.uvarint(g.firstChunk[i + 1]! - g.firstChunk[i]!);
      chunks(l.chunks.slice(g.firstChunk[i], g.firstChunk[i + 1]));
    }
  }
}

/** The footer's distinct block layouts, each checked and indexed once (layout.ts). */
/**
 * One series' id, metric and tags as footers and series indexes store them: ids in strictly
 * increasing order after `prevId`, tag keys sorted, names as string-table references.
 */
export function readSeriesKey(r: ByteReader, prevId: string | null, deref: () => string): { id: string; metric: string; tags: Record<string, string> } {
  const id = r.str();
  if (prevId !== null && !(id > prevId)) r.fail(`series ${id} out of order or repeated`);
  const metric = deref();
  const nTags = r.count(2);
  const tags: Record<string, string> = {};
  let prevKey: string | null = null;
  for (let t = 0; t < nTags; t++) {
    const k = deref();
    if (prevKey !== null && !(k > prevKey)) r.fail(`series ${id}: tag ${k} out of order or repeated`);
    prevKey = k;
    setOwn(tags, k, deref());
  }
  return { id, metric, tags };
}

export function readLayouts(r: ByteReader, deref: () => string): BlockLayout[] {
  const n = r.count(2);
  const out: BlockLayout[] = [];
  const readChunks = (nChunks: number, chunks: LayoutColumn[][]) => {
    for (let c = 0; c < nChunks; c++) {
      const nColumns = r.count();
      const columns: LayoutColumn[] = [];
      for (let k = 0; k < nColumns; k++) {
        const role = r.u8() as ColumnRole;
        columns.push({ role, path: role === ColumnRole.Timestamps ? '' : deref() });
      }
      chunks.push(columns);
    }
  };
  for (let l = 0; l < n; l++) {
    const nChunks = r.count(2);
    const chunks: LayoutColumn[][] = [];
    let layout: BlockLayout = { chunks };
    if (nChunks > 0) readChunks(nChunks, chunks);
    else {
      const span = r.uvarint();
      const nGroups = r.count(2);
      const slots: number[] = [];
      const firstChunk: number[] = [0];
      for (let g = 0; g < nGroups; g++) {
        slots.push((g === 0 ? 0 : slots[g - 1]!) + r.uvarint());
        readChunks(r.count(2), chunks);
        firstChunk.push(chunks.length);
      }
      layout = { chunks, groups: { span, slots, firstChunk } };
    }
    try {
      indexLayout(layout);
    } catch (err) {
      r.fail(`layout ${l}: ${(err as Error).message}`);
    }
    out.push(layout);
  }
  return out;
}
