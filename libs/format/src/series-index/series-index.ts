import { CorruptDataError } from '@s4/core';
import { ByteReader, ByteWriter } from '../codec/bytes.js';
import { decodeFrame, encodeFrame, FRAME_OVERHEAD } from '../codec/frame.js';
import { assertWellFormed } from '../codec/values.js';
import { asCorrupt } from '../segment/checks.js';
import { readLayouts, writeLayouts } from '../segment/footer.js';
import { setOwn } from '../codec/bytes.js';
import { indexLayout, layoutKey } from '../segment/layout.js';
import type { BlockLayout, FooterEntry } from '../segment/types.js';
import { encodeLazy, LAZY_VERSION, openLazy } from './lazy.js';

/**
 * The series index of one (namespace, shard, UTC day): every series of the parts it covers, the
 * postings (which series carry each metric and each tag pair) and, per covered part, where each
 * series' block is — a query answers a selector and reads the blocks without any footer.
 * Specification: docs/format/series-index.md.
 */
export const SERIES_INDEX_VERSION = LAZY_VERSION;
/** "S4IX". */
export const SERIES_INDEX_MAGIC = new Uint8Array([0x53, 0x34, 0x49, 0x58]);
const WHAT = 'series index';

/** A series as the index lists it; its ordinal is its position in `SeriesIndex.series` (ascending id). */
export interface IndexedSeries {
  readonly id: string;
  readonly metric: string;
  readonly tags: Readonly<Record<string, string>>;
}

/** Where a series' block is in a part: its footer entry without the series' id, metric and tags. */
export type IndexedBlock = Omit<FooterEntry, 'id' | 'metric' | 'tags'>;

/** One covered part: the ordinals (ascending) of the series it holds, and each slot's block. */
export interface IndexedPart {
  readonly key: string;
  readonly window: number;
  readonly ordinals: Uint32Array;
  /** The earliest `minTs` and the latest `maxTs` of its slots (0 and 0 when it has none). */
  readonly earliest: number;
  readonly latest: number;
  minTs(i: number): number;
  maxTs(i: number): number;
  block(i: number): IndexedBlock;
}

/**
 * Postings by name with their names ascending: a matcher narrows to a literal prefix by binary
 * search instead of sorting or testing every name.
 */
export interface Postings extends ReadonlyMap<string, Uint32Array> {
  /** The names starting with `prefix` and ending with `suffix` (every name for ""), ascending. */
  withPrefix(prefix: string, suffix?: string): readonly string[];
}

/**
 * The series of an index by ordinal. Decoded indexes keep them as columns of string-table refs
 * (an object per series cost ~150 bytes of heap, most of a decoded index), so a series object is
 * built only for the series a query returns.
 */
export interface SeriesTable {
  readonly length: number;
  /**
   * True when a series' row is decompressed and decoded when first read (version 2): a selection
   * then prefers the postings to reading the tags of many series.
   */
  readonly onDemand?: boolean;
  /** Series `o` as a new object. */
  at(o: number): IndexedSeries;
  /** The value of tag `key` of series `o`, or undefined when it has none. */
  tag(o: number, key: string): string | undefined;
  /** The tag keys of series `o`. */
  keys(o: number): string[];
}

export interface SeriesIndex {
  readonly ns: string;
  readonly shard: number;
  readonly day: number;
  readonly series: SeriesTable;
  /** Ordinals (ascending) of each metric's series. */
  readonly metrics: ReadonlyMap<string, Uint32Array>;
  /** Per tag key, per value, ordinals (ascending) of the series carrying that pair. */
  readonly tags: ReadonlyMap<string, ReadonlyMap<string, Uint32Array>>;
  readonly layouts: readonly BlockLayout[];
  readonly parts: readonly IndexedPart[];
  /** Roughly the heap it holds once every part of it has been read (version 2 decodes on demand). */
  readonly bytes?: number;
}

/** What an index is built from: the footer entries of every part it covers. */
export interface SeriesIndexInput {
  readonly ns: string;
  readonly shard: number;
  readonly day: number;
  readonly parts: readonly { readonly key: string; readonly window: number; readonly series: readonly FooterEntry[] }[];
}

/**
 * "S4IX" | version u8 | 3 zero bytes | the version's payload (the spec). Writers write the
 * current version; version 1 stays writable for its golden file and for comparisons.
 * Deterministic: parts sorted by key, series by id, postings by name, so equal inputs give equal bytes.
 */
export function encodeSeriesIndex(input: SeriesIndexInput, level?: number, version: 1 | 2 = SERIES_INDEX_VERSION): Uint8Array {
  if (version === 1) return withHeader(1, [encodeV1(input, level)]);
  return withHeader(2, encodeLazy(input, level));
}

function withHeader(version: number, chunks: readonly Uint8Array[]): Uint8Array {
  let n = 8;
  for (const c of chunks) n += c.length;
  const out = new Uint8Array(n);
  out.set(SERIES_INDEX_MAGIC);
  out[4] = version;
  let at = 8;
  for (const c of chunks) {
    out.set(c, at);
    at += c.length;
  }
  return out;
}

/** Version 1's payload: frame(everything). */
function encodeV1(input: SeriesIndexInput, level?: number): Uint8Array {
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
  const { byId, ids, ordinal } = distinctSeries(input);
  const metrics = new Map<string, number[]>();
  const tags = new Map<string, Map<string, number[]>>();
  const sw = new ByteWriter(ids.length * 24 + 16);
  sw.uvarint(ids.length);
  ids.forEach((id, o) => writeSeries(sw, byId.get(id)!, o, ref, metrics, tags));
  const pw = new ByteWriter(ids.length * 8 + 16);
  const postings = (m: Map<string, number[]>) => {
    const names = [...m.keys()].sort();
    pw.uvarint(names.length);
    for (const name of names) {
      pw.uvarint(ref(name));
      const list = m.get(name)!;
      pw.uvarint(list.length);
      let prev = 0;
      for (const o of list) {
        pw.uvarint(o - prev);
        prev = o;
      }
    }
  };
  postings(metrics);
  const keys = [...tags.keys()].sort();
  pw.uvarint(keys.length);
  for (const k of keys) {
    pw.uvarint(ref(k));
    postings(tags.get(k)!);
  }
  const layouts: BlockLayout[] = [];
  const layoutIds = new Map<string, number>();
  const parts = [...input.parts].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const bw = new ByteWriter(1024);
  bw.uvarint(parts.length);
  for (const p of parts) {
    assertWellFormed(p.key);
    bw.str(p.key);
    bw.svarint(p.window);
    const entries = [...p.series].sort((a, b) => ordinal.get(a.id)! - ordinal.get(b.id)!);
    bw.uvarint(entries.length);
    let prev = 0;
    entries.forEach((e, i) => {
      const o = ordinal.get(e.id)!;
      if (i > 0 && o === prev) throw new RangeError(`part ${p.key}: series ${e.id} listed twice`);
      bw.uvarint(o - prev);
      prev = o;
      writeEntry(bw, p.key, e, ref, layoutIds, layouts);
    });
  }
  const lw = new ByteWriter(256);
  writeLayouts(lw, layouts, ref);
  assertWellFormed(input.ns);
  const w = new ByteWriter(sw.pos + pw.pos + bw.pos + lw.pos + 1024);
  w.str(input.ns);
  w.uvarint(input.shard);
  w.svarint(input.day);
  w.uvarint(table.size);
  for (const s of table.keys()) w.str(s);
  w.bytes(lw.written());
  w.bytes(sw.written());
  w.bytes(pw.written());
  w.bytes(bw.written());
  return encodeFrame(w.written(), level);
}

export function decodeSeriesIndex(b: Uint8Array): SeriesIndex {
  if (b.length < 8) throw new CorruptDataError(WHAT, `${b.length} bytes is too short`);
  for (let i = 0; i < 4; i++) if (b[i] !== SERIES_INDEX_MAGIC[i]) throw new CorruptDataError(WHAT, 'magic "S4IX" missing');
  if (b[4] !== 1 && b[4] !== LAZY_VERSION) throw new CorruptDataError(WHAT, `unsupported version ${b[4]}`);
  if (b[5] !== 0 || b[6] !== 0 || b[7] !== 0) throw new CorruptDataError(WHAT, 'reserved header bytes are not zero');
  if (b[4] === LAZY_VERSION) {
    try {
      return openLazy(b);
    } catch (err) {
      throw asCorrupt(WHAT, err);
    }
  }
  try {
    const r = new ByteReader(decodeFrame(b.subarray(8), WHAT), WHAT);
    const ns = r.str();
    const shard = r.uvarint();
    const day = r.svarint();
    const nStrings = r.count();
    const strings: string[] = [];
    for (let i = 0; i < nStrings; i++) strings.push(r.str());
    const refIndex = () => {
      const i = r.uvarint();
      if (i >= nStrings) r.fail(`string ref ${i} outside a table of ${nStrings}`);
      return i;
    };
    const deref = () => strings[refIndex()]!;
    const layouts = readLayouts(r, deref);
    const nSeries = r.count(3);
    const ids = new Array<string>(nSeries);
    const metricRefs = new Uint32Array(nSeries);
    const tagStart = new Uint32Array(nSeries + 1);
    const tagRefs: number[] = [];
    let prevId: string | null = null;
    for (let o = 0; o < nSeries; o++) {
      const id = r.str();
      if (prevId !== null && !(id > prevId)) r.fail(`series ${id} out of order or repeated`);
      prevId = id;
      ids[o] = id;
      metricRefs[o] = refIndex();
      const nTags = r.count(2);
      tagStart[o] = tagRefs.length;
      let prevKey: string | null = null;
      for (let t = 0; t < nTags; t++) {
        const k = refIndex();
        if (prevKey !== null && !(strings[k]! > prevKey)) r.fail(`series ${id}: tag ${strings[k]} out of order or repeated`);
        prevKey = strings[k]!;
        tagRefs.push(k, refIndex());
      }
    }
    tagStart[nSeries] = tagRefs.length;
    // The ids as one string and where each starts: a string per id costs ~40 bytes of heap.
    const idStart = new Uint32Array(nSeries + 1);
    for (let o = 0; o < nSeries; o++) idStart[o + 1] = idStart[o]! + ids[o]!.length;
    const series = new ColumnSeries(strings, ids.join(''), idStart, metricRefs, tagStart, Uint32Array.from(tagRefs));
    // Names are written sorted (encodeSeriesIndex), so each map is a sorted name list over one
    // array of ordinals: no Map entry and no typed array per name until a query asks for one.
    const readPostings = () => {
      const n = r.count(2);
      const names: string[] = [];
      const starts = new Uint32Array(n + 1);
      const all: number[] = [];
      for (let i = 0; i < n; i++) {
        const name = deref();
        if (i > 0 && !(name > names[i - 1]!)) r.fail(`postings of ${JSON.stringify(name)} out of order or listed twice`);
        names.push(name);
        starts[i] = all.length;
        const len = r.count();
        let o = 0;
        for (let k = 0; k < len; k++) {
          const d = r.uvarint();
          if (k > 0 && d === 0) r.fail(`postings of ${JSON.stringify(name)} not ascending`);
          o += d;
          if (o >= nSeries) r.fail(`postings of ${JSON.stringify(name)}: series ${o} outside ${nSeries}`);
          all.push(o);
        }
      }
      starts[n] = all.length;
      return new SortedPostings(names, starts, Uint32Array.from(all));
    };
    const metrics = readPostings();
    const nKeys = r.count(2);
    const tags = new Map<string, SortedPostings>();
    for (let i = 0; i < nKeys; i++) {
      const k = deref();
      if (tags.has(k)) r.fail(`tag key ${JSON.stringify(k)} listed twice`);
      tags.set(k, readPostings());
    }
    const nParts = r.count(2);
    const parts: IndexedPart[] = [];
    for (let p = 0; p < nParts; p++) {
      const key = r.str();
      const window = r.svarint();
      const n = r.count(7);
      const part = {
        key,
        window,
        ordinals: new Uint32Array(n),
        offsets: new Float64Array(n),
        lengths: new Float64Array(n),
        counts: new Float64Array(n),
        minTs: new Float64Array(n),
        maxTs: new Float64Array(n),
        layouts: new Int32Array(n),
        extraStart: new Uint32Array(n + 1),
        extras: [] as number[],
      };
      let o = 0;
      for (let i = 0; i < n; i++) {
        const d = r.uvarint();
        if (i > 0 && d === 0) r.fail(`part ${key}: series not ascending`);
        o += d;
        if (o >= nSeries) r.fail(`part ${key}: series ${o} outside ${nSeries}`);
        part.ordinals[i] = o;
        part.offsets[i] = r.uvarint();
        const length = r.uvarint();
        part.lengths[i] = length;
        part.counts[i] = r.uvarint();
        part.minTs[i] = r.svarint();
        part.maxTs[i] = r.svarint();
        if (part.maxTs[i]! < part.minTs[i]!) r.fail(`part ${key}: series ${o} has maxTs before minTs`);
        const li = r.uvarint() - 1;
        part.layouts[i] = li;
        part.extraStart[i] = part.extras.length;
        if (li < 0) {
          const nFields = r.count();
          for (let f = 0; f < nFields; f++) part.extras.push(refIndex());
        } else {
          if (li >= layouts.length) r.fail(`part ${key}: layout ${li} outside ${layouts.length}`);
          let total = 0;
          for (let c = 0; c < layouts[li]!.chunks.length; c++) {
            const len = r.uvarint();
            if (len < FRAME_OVERHEAD) r.fail(`part ${key}: chunk of ${len} bytes is shorter than a frame`);
            total += len;
            part.extras.push(len);
          }
          if (total !== length) r.fail(`part ${key}: chunks of ${total} bytes in a block of ${length}`);
        }
      }
      part.extraStart[n] = part.extras.length;
      parts.push(new ColumnPart({ ...part, extras: Float64Array.from(part.extras) }, strings, layouts));
    }
    r.done();
    const index = { ns, shard, day, series, metrics, tags, layouts, parts };
    return { ...index, bytes: v1Bytes(index, strings) };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}

/** The footer entry of slot `i` of a part, as the segment's own footer has it. */
export function indexedEntry(index: SeriesIndex, part: IndexedPart, i: number): FooterEntry {
  const s = index.series.at(part.ordinals[i]!);
  return { id: s.id, metric: s.metric, tags: s.tags, ...part.block(i) };
}

/** A version 1 part: its blocks as columns, decoded whole (one slot per series it holds, ascending ordinal). */
class ColumnPart implements IndexedPart {
  readonly key: string;
  readonly window: number;
  readonly ordinals: Uint32Array;
  constructor(
    readonly c: {
      key: string;
      window: number;
      ordinals: Uint32Array;
      offsets: Float64Array;
      lengths: Float64Array;
      counts: Float64Array;
      minTs: Float64Array;
      maxTs: Float64Array;
      /** Index into the layouts (version 2 blocks), or -1 for a version 1 block. */
      layouts: Int32Array;
      /** Slot i's chunk lengths (v2) or field refs (v1) are `extras[extraStart[i] .. extraStart[i+1])`. */
      extraStart: Uint32Array;
      extras: Float64Array;
    },
    private readonly strings: readonly string[],
    private readonly layouts: readonly BlockLayout[],
  ) {
    this.key = c.key;
    this.window = c.window;
    this.ordinals = c.ordinals;
  }

  get earliest(): number {
    return this.c.minTs.length === 0 ? 0 : this.c.minTs.reduce((a, b) => Math.min(a, b));
  }

  get latest(): number {
    return this.c.maxTs.length === 0 ? 0 : this.c.maxTs.reduce((a, b) => Math.max(a, b));
  }

  get bytes(): number {
    const c = this.c;
    return 200 + c.ordinals.byteLength + c.offsets.byteLength * 5 + c.layouts.byteLength + c.extraStart.byteLength + c.extras.byteLength;
  }

  minTs(i: number): number {
    return this.c.minTs[i]!;
  }

  maxTs(i: number): number {
    return this.c.maxTs[i]!;
  }

  block(i: number): IndexedBlock {
    const c = this.c;
    const extras = Array.from(c.extras.subarray(c.extraStart[i], c.extraStart[i + 1]));
    const base = { offset: c.offsets[i]!, length: c.lengths[i]!, count: c.counts[i]!, minTs: c.minTs[i]!, maxTs: c.maxTs[i]! };
    const li = c.layouts[i]!;
    if (li < 0) return { ...base, fields: extras.map((f) => this.strings[f]!) };
    const layout = this.layouts[li]!;
    return { ...base, fields: indexLayout(layout).fields as string[], directory: { layout, chunkLengths: extras } };
  }
}

function push(m: Map<string, number[]>, k: string, v: number): void {
  let l = m.get(k);
  if (!l) m.set(k, (l = []));
  l.push(v);
}

/** A series table as columns: ids, and string-table refs for metrics and tag pairs. */
class ColumnSeries implements SeriesTable {
  constructor(
    private readonly strings: readonly string[],
    /** Series o's id is `idText.slice(idStart[o], idStart[o + 1])`. */
    private readonly idText: string,
    private readonly idStart: Uint32Array,
    private readonly metrics: Uint32Array,
    /** Series o's tag key and value refs, in pairs, are `tagRefs[tagStart[o] .. tagStart[o + 1])`. */
    private readonly tagStart: Uint32Array,
    private readonly tagRefs: Uint32Array,
  ) {}

  get length(): number {
    return this.metrics.length;
  }

  /** Bytes of its arrays and ids (two per character: ids need not be Latin-1). */
  get bytes(): number {
    return this.idText.length * 2 + this.idStart.byteLength + this.metrics.byteLength + this.tagStart.byteLength + this.tagRefs.byteLength;
  }

  at(o: number): IndexedSeries {
    const tags: Record<string, string> = {};
    for (let t = this.tagStart[o]!; t < this.tagStart[o + 1]!; t += 2) setOwn(tags, this.strings[this.tagRefs[t]!]!, this.strings[this.tagRefs[t + 1]!]!);
    return { id: this.idText.slice(this.idStart[o], this.idStart[o + 1]), metric: this.strings[this.metrics[o]!]!, tags };
  }

  keys(o: number): string[] {
    const out: string[] = [];
    for (let t = this.tagStart[o]!; t < this.tagStart[o + 1]!; t += 2) out.push(this.strings[this.tagRefs[t]!]!);
    return out;
  }

  tag(o: number, key: string): string | undefined {
    for (let t = this.tagStart[o]!; t < this.tagStart[o + 1]!; t += 2) if (this.strings[this.tagRefs[t]!] === key) return this.strings[this.tagRefs[t + 1]!];
    return undefined;
  }
}

/** Postings by name, names in code-unit order, each list a view into one array. */
export class SortedPostings implements Postings {
  constructor(
    /** Ascending. */
    readonly names: readonly string[],
    private readonly starts: Uint32Array,
    private readonly all: Uint32Array,
  ) {}

  get size(): number {
    return this.names.length;
  }

  /** Bytes of its arrays (names are shared with the string table). */
  get bytes(): number {
    return this.names.length * 8 + this.starts.byteLength + this.all.byteLength;
  }

  private find(name: string): number {
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.names[mid]! < name) lo = mid + 1;
      else hi = mid;
    }
    return lo < this.names.length && this.names[lo] === name ? lo : -1;
  }

  private list(i: number): Uint32Array {
    return this.all.subarray(this.starts[i], this.starts[i + 1]);
  }

  withPrefix(prefix: string, suffix = ''): readonly string[] {
    if (suffix !== '') return this.withPrefix(prefix).filter((n) => n.endsWith(suffix));
    if (prefix === '') return this.names;
    // Names starting with the prefix are contiguous in code-unit order, from the first one ≥ it.
    let lo = 0;
    let hi = this.names.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.names[mid]! < prefix) lo = mid + 1;
      else hi = mid;
    }
    let to = lo;
    while (to < this.names.length && this.names[to]!.startsWith(prefix)) to++;
    return this.names.slice(lo, to);
  }

  get(name: string): Uint32Array | undefined {
    const i = this.find(name);
    return i < 0 ? undefined : this.list(i);
  }

  has(name: string): boolean {
    return this.find(name) >= 0;
  }

  keys(): MapIterator<string> {
    return this.names[Symbol.iterator]();
  }

  *values(): MapIterator<Uint32Array> {
    for (let i = 0; i < this.names.length; i++) yield this.list(i);
  }

  *entries(): MapIterator<[string, Uint32Array]> {
    for (let i = 0; i < this.names.length; i++) yield [this.names[i]!, this.list(i)];
  }

  [Symbol.iterator](): MapIterator<[string, Uint32Array]> {
    return this.entries();
  }

  forEach(fn: (value: Uint32Array, key: string, map: ReadonlyMap<string, Uint32Array>) => void): void {
    for (let i = 0; i < this.names.length; i++) fn(this.list(i), this.names[i]!, this);
  }
}

/** A series table of objects (tests, and indexes built in memory). */
export function seriesTable(list: readonly IndexedSeries[]): SeriesTable {
  return { length: list.length, at: (o) => list[o]!, tag: (o, key) => (Object.hasOwn(list[o]!.tags, key) ? list[o]!.tags[key] : undefined), keys: (o) => Object.keys(list[o]!.tags) };
}

/** Roughly the heap a decoded index holds: its own estimate, else its arrays and a series object per series. */
export function decodedIndexBytes(index: SeriesIndex): number {
  if (index.bytes !== undefined) return index.bytes;
  let n = index.series.length * 160;
  for (const m of [index.metrics, ...index.tags.values()]) n += 64 + m.size * 120;
  for (const p of index.parts) n += 200 + p.ordinals.length * 60;
  return n;
}

/** A version 1 index's heap: its arrays, an id string per series, and the string table. */
function v1Bytes(index: SeriesIndex, strings: readonly string[]): number {
  let n = index.series instanceof ColumnSeries ? index.series.bytes : index.series.length * 160;
  for (const s of strings) n += 24 + s.length;
  const postings = (m: ReadonlyMap<string, Uint32Array>) => (m instanceof SortedPostings ? m.bytes : m.size * 120);
  n += postings(index.metrics);
  for (const m of index.tags.values()) n += 64 + postings(m);
  for (const p of index.parts) n += p instanceof ColumnPart ? p.bytes : 200;
  return n;
}

/**
 * A part's entry for one series after its ordinal (both versions write it so): where its block
 * is, its span, and its fields or the index of its block layout in `layouts` (added when new).
 */
export function writeEntry(w: ByteWriter, part: string, e: FooterEntry, ref: (s: string) => number, layoutIds: Map<string, number>, layouts: BlockLayout[]): void {
  w.uvarint(e.offset);
  w.uvarint(e.length);
  w.uvarint(e.count);
  // Absolute: the difference of two safe integers need not be one; zstd takes the repetition out.
  if (e.maxTs < e.minTs) throw new RangeError(`part ${part}: series ${e.id} has maxTs before minTs`);
  w.svarint(e.minTs);
  w.svarint(e.maxTs);
  const d = e.directory;
  if (!d) {
    w.uvarint(0);
    w.uvarint(e.fields.length);
    for (const f of e.fields) w.uvarint(ref(f));
    return;
  }
  const lk = layoutKey(d.layout);
  let li = layoutIds.get(lk);
  if (li === undefined) {
    li = layouts.length;
    layoutIds.set(lk, li);
    layouts.push(d.layout);
  }
  if (d.chunkLengths.length !== d.layout.chunks.length) throw new RangeError(`part ${part}: series ${e.id} has ${d.chunkLengths.length} chunk lengths for ${d.layout.chunks.length} chunks`);
  w.uvarint(li + 1);
  for (const len of d.chunkLengths) w.uvarint(len);
}

/** The series of an index's parts, deduplicated by id, in id order: a series' ordinal is its position (both versions). */
export function distinctSeries(input: SeriesIndexInput): { byId: Map<string, FooterEntry>; ids: string[]; ordinal: Map<string, number> } {
  const byId = new Map<string, FooterEntry>();
  for (const p of input.parts) for (const e of p.series) if (!byId.has(e.id)) byId.set(e.id, e);
  const ids = [...byId.keys()].sort();
  return { byId, ids, ordinal: new Map(ids.map((id, i) => [id, i])) };
}

/** A series' row (id, metric, tag pairs by key), its ordinal added to the postings of its metric and tag pairs (both versions). */
export function writeSeries(w: ByteWriter, e: FooterEntry, o: number, ref: (s: string) => number, metrics: Map<string, number[]>, tags: Map<string, Map<string, number[]>>): void {
  assertWellFormed(e.id);
  w.str(e.id);
  w.uvarint(ref(e.metric));
  push(metrics, e.metric, o);
  const keys = Object.keys(e.tags).sort();
  w.uvarint(keys.length);
  for (const k of keys) {
    const v = e.tags[k]!;
    w.uvarint(ref(k));
    w.uvarint(ref(v));
    let values = tags.get(k);
    if (!values) tags.set(k, (values = new Map<string, number[]>()));
    push(values, v, o);
  }
}
