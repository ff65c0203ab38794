import { CorruptDataError } from '@s4/core';
import { ByteReader, ByteWriter, setOwn } from '../codec/bytes.js';
import { decodeFrame, encodeFrame, FRAME_OVERHEAD } from '../codec/frame.js';
import { assertWellFormed } from '../codec/values.js';
import { readLayouts, writeLayouts } from '../segment/footer.js';
import { indexLayout } from '../segment/layout.js';
import type { BlockLayout } from '../segment/types.js';
import { distinctSeries, writeEntry, writeSeries, type IndexedBlock, type IndexedPart, type IndexedSeries, type Postings, type SeriesIndex, type SeriesIndexInput, type SeriesTable } from './series-index.js';

/**
 * Series index version 2 (docs/format/series-index.md): a small head frame says where every
 * section's blocks are, and each block of rows is a frame of its own, so a selection
 * decompresses and decodes only the blocks it touches (the postings of its metric and tag keys,
 * then the rows of the series it selects) instead of the whole index.
 */
export const LAZY_VERSION = 2;
const WHAT = 'series index';
const encoder = new TextEncoder();
const EMPTY = new Uint8Array(0);

/** Rows per block: small enough that a few selected series touch little, large enough for zstd. */
const STRINGS_PER_BLOCK = 512;
const SERIES_PER_BLOCK = 256;
const NAMES_PER_BLOCK = 4096;
const POSTINGS_PER_BLOCK = 1024;
const ENTRIES_PER_BLOCK = 256;

interface SectionOut {
  readonly rows: number;
  readonly per: number;
  readonly frames: Uint8Array[];
}

/** Rows written one after another into one writer; `section` cuts them into framed blocks. */
class Rows {
  readonly w = new ByteWriter(4096);
  readonly ends: number[] = [];
  end(): void {
    this.ends.push(this.w.pos);
  }
  section(per: number, level: number | undefined): SectionOut {
    const frames: Uint8Array[] = [];
    const all = this.w.written();
    const b = new ByteWriter(4096);
    for (let first = 0; first < this.ends.length; first += per) {
      const last = Math.min(first + per, this.ends.length);
      const start = first === 0 ? 0 : this.ends[first - 1]!;
      b.reset();
      b.uvarint(last - first);
      let prev = start;
      for (let i = first; i < last; i++) {
        b.uvarint(this.ends[i]! - prev);
        prev = this.ends[i]!;
      }
      b.bytes(all.subarray(start, this.ends[last - 1]));
      frames.push(encodeFrame(b.written(), level));
    }
    return { rows: this.ends.length, per, frames };
  }
}

function writeDir(w: ByteWriter, s: SectionOut, body: Uint8Array[]): void {
  w.uvarint(s.rows);
  w.uvarint(s.per);
  w.uvarint(s.frames.length);
  for (const f of s.frames) {
    w.uvarint(f.length);
    body.push(f);
  }
}

/** The payload of a version 2 index: head length u32 | head frame | blocks. */
export function encodeLazy(input: SeriesIndexInput, level: number | undefined): Uint8Array[] {
  const table = new Map<string, number>();
  const strings = new Rows();
  const ref = (s: string) => {
    let i = table.get(s);
    if (i === undefined) {
      assertWellFormed(s);
      i = table.size;
      table.set(s, i);
      strings.w.str(s);
      strings.end();
    }
    return i;
  };
  const { byId, ids, ordinal } = distinctSeries(input);
  const metrics = new Map<string, number[]>();
  const tags = new Map<string, Map<string, number[]>>();
  const series = new Rows();
  ids.forEach((id, o) => {
    writeSeries(series.w, byId.get(id)!, o, ref, metrics, tags);
    series.end();
  });
  // A postings map is two sections of one row per name: the names (ascending), so that a matcher
  // scans one key's values without the string table or any list, and the lists.
  const postings = (m: Map<string, number[]>) => {
    const names = new Rows();
    const lists = new Rows();
    for (const name of [...m.keys()].sort()) {
      assertWellFormed(name);
      names.w.str(name);
      names.end();
      const list = m.get(name)!;
      lists.w.uvarint(list.length);
      let prev = 0;
      for (const o of list) {
        lists.w.uvarint(o - prev);
        prev = o;
      }
      lists.end();
    }
    return { names: names.section(NAMES_PER_BLOCK, level), lists: lists.section(POSTINGS_PER_BLOCK, level) };
  };
  const metricSection = postings(metrics);
  const keySections = [...tags.keys()].sort().map((k) => ({ ref: ref(k), section: postings(tags.get(k)!) }));
  const layouts: BlockLayout[] = [];
  const layoutIds = new Map<string, number>();
  const parts = [...input.parts].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const partOut = parts.map((p) => {
    assertWellFormed(p.key);
    const entries = [...p.series].sort((a, b) => ordinal.get(a.id)! - ordinal.get(b.id)!);
    const ow = new ByteWriter(entries.length + 16);
    const rows = new Rows();
    let prev = 0;
    let earliest = entries.length === 0 ? 0 : Infinity;
    let latest = entries.length === 0 ? 0 : -Infinity;
    entries.forEach((e, i) => {
      const o = ordinal.get(e.id)!;
      if (i > 0 && o === prev) throw new RangeError(`part ${p.key}: series ${e.id} listed twice`);
      ow.uvarint(o - prev);
      prev = o;
      writeEntry(rows.w, p.key, e, ref, layoutIds, layouts);
      earliest = Math.min(earliest, e.minTs);
      latest = Math.max(latest, e.maxTs);
      rows.end();
    });
    // A part holding every series of the index (one part a shard-day, once folded) needs no list.
    const every = entries.length === ids.length && entries.length > 0;
    return { key: p.key, window: p.window, earliest, latest, n: entries.length, ordinals: every ? EMPTY : encodeFrame(ow.written(), level), entries: rows.section(ENTRIES_PER_BLOCK, level) };
  });
  const lw = new ByteWriter(256);
  writeLayouts(lw, layouts, ref);
  // Every string is in the table now: it is written last, before the head that lists it.
  const body: Uint8Array[] = [];
  const h = new ByteWriter(1024);
  assertWellFormed(input.ns);
  h.str(input.ns);
  h.uvarint(input.shard);
  h.svarint(input.day);
  writeDir(h, strings.section(STRINGS_PER_BLOCK, level), body);
  h.bytes(lw.written());
  writeDir(h, series.section(SERIES_PER_BLOCK, level), body);
  writeDir(h, metricSection.names, body);
  writeDir(h, metricSection.lists, body);
  h.uvarint(keySections.length);
  for (const k of keySections) {
    h.uvarint(k.ref);
    writeDir(h, k.section.names, body);
    writeDir(h, k.section.lists, body);
  }
  h.uvarint(partOut.length);
  for (const p of partOut) {
    h.str(p.key);
    h.svarint(p.window);
    h.svarint(p.earliest);
    h.svarint(p.latest);
    h.uvarint(p.n);
    h.uvarint(p.ordinals.length);
    body.push(p.ordinals);
    writeDir(h, p.entries, body);
  }
  const head = encodeFrame(h.written(), level);
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, head.length, true);
  return [len, head, ...body];
}


/** A decoded block: its rows are raw[base + ends[k - 1] (or base) .. base + ends[k]). */
interface RowBlock {
  readonly raw: Uint8Array;
  readonly base: number;
  /** Row k ends `ends[k]` bytes after `base` (the rows are back to back). */
  readonly ends: Uint32Array;
}

/** A section's blocks in the index bytes, decoded (decompressed and split into rows) when first read. */
class Section {
  private readonly blocks: (RowBlock | undefined)[];
  constructor(
    private readonly buf: Uint8Array,
    /** Block b is buf[ends[b - 1] (or start) .. ends[b]). */
    private readonly start: number,
    private readonly ends: Float64Array,
    readonly rows: number,
    readonly per: number,
    private readonly what: string,
  ) {
    this.blocks = new Array<RowBlock | undefined>(ends.length);
  }

  /** Bytes of its frames in the index (a decoded block holds ~3x as many: the heap estimate's unit). */
  storedBytes = 0;

  /** A reader over row i's bytes. */
  row(i: number): ByteReader {
    const start = this.locate(i);
    return new ByteReader(this.raw, this.what, start, this.rowEnd);
  }

  /** The block bytes holding the row `locate` found last, and where that row ends in them. */
  raw: Uint8Array = EMPTY;
  rowEnd = 0;

  /** Where row i starts in `raw` (set, with `rowEnd`, for it): a row read without a reader. */
  locate(i: number): number {
    const b = Math.floor(i / this.per);
    const block = this.block(b);
    const k = i - b * this.per;
    this.raw = block.raw;
    this.rowEnd = block.base + block.ends[k]!;
    return k === 0 ? block.base : block.base + block.ends[k - 1]!;
  }

  /** Block b (rows b * per ..), decoded when first asked for: for scans over many rows. */
  block(b: number): RowBlock {
    let block = this.blocks[b];
    if (!block) this.blocks[b] = block = this.decode(b);
    return block;
  }

  private decode(b: number): RowBlock {
    const from = b === 0 ? this.start : this.ends[b - 1]!;
    const raw = decodeFrame(this.buf.subarray(from, this.ends[b]), this.what);
    const r = new ByteReader(raw, this.what);
    const want = Math.min(this.per, this.rows - b * this.per);
    const n = r.count();
    if (n !== want) r.fail(`block ${b} holds ${n} rows, not ${want}`);
    // One pass over the row lengths, one-byte varints read in place: a first query splits blocks
    // of thousands of rows before V8 has optimised this loop, where a call per length cost twice.
    const ends = new Uint32Array(n);
    let p = r.pos;
    let at = 0;
    for (let i = 0; i < n; i++) {
      const x = raw[p]!; // undefined past the end: the reader below then reports the truncation
      if (x < 0x80) p++;
      else {
        r.pos = p;
        at += r.uvarint();
        p = r.pos;
        ends[i] = at;
        continue;
      }
      ends[i] = at += x;
    }
    if (at !== raw.length - p) r.fail(`block ${b}: rows of ${at} bytes in ${raw.length - p}`);
    return { raw, base: p, ends };
  }
}

/** Reads a section directory from the head; its blocks start at `at.pos` of the body. */
function readDir(h: ByteReader, buf: Uint8Array, at: { pos: number }, what: string): Section {
  const rows = h.uvarint();
  const per = h.uvarint();
  const n = h.count();
  if (per === 0 || Math.ceil(rows / per) !== n) h.fail(`${what}: ${n} blocks for ${rows} rows of ${per}`);
  const ends = new Float64Array(n);
  const start = at.pos;
  let stored = 0;
  for (let b = 0; b < n; b++) {
    const len = h.uvarint();
    if (len < FRAME_OVERHEAD) h.fail(`${what}: block of ${len} bytes`);
    at.pos += len;
    if (at.pos > buf.length) h.fail(`${what}: block ${b} ends past the index (${at.pos} > ${buf.length})`);
    ends[b] = at.pos;
    stored += len;
  }
  const s = new Section(buf, start, ends, rows, per, `${WHAT} ${what}`);
  s.storedBytes = stored;
  return s;
}

/** A version 2 index opened over its bytes: only the head is decoded here. */
export function openLazy(b: Uint8Array): SeriesIndex {
  const hr = new ByteReader(b, WHAT, 8);
  const headLen = hr.u32();
  const head = decodeFrame(hr.bytes(headLen), `${WHAT} head`);
  const at = { pos: hr.pos };
  const h = new ByteReader(head, `${WHAT} head`);
  const ns = h.str();
  const shard = h.uvarint();
  const day = h.svarint();
  const strings = new StringTable(readDir(h, b, at, 'strings'));
  const layouts = readLayouts(h, () => strings.get(h.uvarint()));
  const seriesSection = readDir(h, b, at, 'series');
  const metrics = lazyPostings(h, b, at, 'metric postings', seriesSection.rows);
  const nKeys = h.count();
  const tags = new Map<string, LazyPostings>();
  const keyRefs = new Map<string, number>();
  let prevKey: string | null = null;
  for (let i = 0; i < nKeys; i++) {
    const r = h.uvarint();
    const k = strings.get(r);
    if (prevKey !== null && !(k > prevKey)) h.fail(`tag key ${JSON.stringify(k)} out of order or listed twice`);
    prevKey = k;
    keyRefs.set(k, r);
    tags.set(k, lazyPostings(h, b, at, `postings of ${k}`, seriesSection.rows));
  }
  const series = new LazySeries(seriesSection, strings, keyRefs);
  const nParts = h.count();
  const parts: IndexedPart[] = [];
  let prevPart: string | null = null;
  for (let p = 0; p < nParts; p++) {
    const key = h.str();
    if (prevPart !== null && !(key > prevPart)) h.fail(`part ${key} out of order or listed twice`);
    prevPart = key;
    const window = h.svarint();
    const earliest = h.svarint();
    const latest = h.svarint();
    if (latest < earliest) h.fail(`part ${key}: latest sample before the earliest`);
    const n = h.uvarint();
    const olen = h.uvarint();
    const ostart = at.pos;
    at.pos += olen;
    if (at.pos > b.length) h.fail(`part ${key}: ordinals end past the index`);
    const entries = readDir(h, b, at, `part ${key}`);
    if (entries.rows !== n) h.fail(`part ${key}: ${entries.rows} entries for ${n} series`);
    if (olen === 0 && n !== seriesSection.rows) h.fail(`part ${key}: no ordinals for ${n} of ${seriesSection.rows} series`);
    parts.push(new LazyPart(key, window, earliest, latest, n, b.subarray(ostart, ostart + olen), entries, seriesSection.rows, strings, layouts));
  }
  h.done();
  if (at.pos !== b.length) hr.fail(`${b.length - at.pos} unexpected trailing bytes`);
  let bytes = b.length + 512;
  bytes += seriesSection.storedBytes * 3 + strings.section.storedBytes * 3 + strings.section.rows * 40;
  for (const p of parts) bytes += (p as LazyPart).bytes;
  bytes += metrics.bytes;
  for (const t of tags.values()) bytes += 64 + t.bytes;
  return { ns, shard, day, series, metrics, tags, layouts, parts, bytes };
}

class StringTable {
  private readonly cache: (string | undefined)[];
  constructor(readonly section: Section) {
    this.cache = new Array<string | undefined>(section.rows);
  }
  get(i: number): string {
    let s = this.cache[i];
    if (s === undefined) {
      if (!(i >= 0 && i < this.section.rows)) throw new CorruptDataError(WHAT, `string ref ${i} outside a table of ${this.section.rows}`);
      const r = this.section.row(i);
      s = r.str();
      r.done();
      this.cache[i] = s;
    }
    return s;
  }
}

function lazyPostings(h: ByteReader, b: Uint8Array, at: { pos: number }, what: string, nSeries: number): LazyPostings {
  const names = readDir(h, b, at, `${what} names`);
  const lists = readDir(h, b, at, `${what} lists`);
  if (lists.rows !== names.rows) h.fail(`${what}: ${lists.rows} lists for ${names.rows} names`);
  return new LazyPostings(names, lists, nSeries);
}

/** Postings whose names and lists are read on demand; names ascending, found by binary search. */
class LazyPostings implements Postings {
  private readonly names: (string | undefined)[];
  private readonly lists: (Uint32Array | undefined)[];
  constructor(
    private readonly section: Section,
    private readonly listSection: Section,
    private readonly nSeries: number,
  ) {
    this.names = new Array<string | undefined>(section.rows);
    this.lists = new Array<Uint32Array | undefined>(section.rows);
  }

  get bytes(): number {
    return (this.section.storedBytes + this.listSection.storedBytes) * 3 + this.section.rows * 48;
  }

  get size(): number {
    return this.section.rows;
  }

  nameAt(i: number): string {
    let s = this.names[i];
    if (s === undefined) {
      const r = this.section.row(i);
      this.names[i] = s = r.str();
      r.done();
    }
    return s;
  }

  private list(i: number): Uint32Array {
    let l = this.lists[i];
    if (l) return l;
    const r = this.listSection.row(i);
    const name = this.nameAt(i);
    const len = r.count();
    l = new Uint32Array(len);
    let o = 0;
    for (let k = 0; k < len; k++) {
      const d = r.uvarint();
      if (k > 0 && d === 0) r.fail(`postings of ${JSON.stringify(name)} not ascending`);
      o += d;
      if (o >= this.nSeries) r.fail(`postings of ${JSON.stringify(name)}: series ${o} outside ${this.nSeries}`);
      l[k] = o;
    }
    r.done();
    return (this.lists[i] = l);
  }

  /** The first row whose name is ≥ s. */
  lowerBound(s: string): number {
    let lo = 0;
    let hi = this.section.rows;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.nameAt(mid) < s) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private find(name: string): number {
    const i = this.lowerBound(name);
    return i < this.section.rows && this.nameAt(i) === name ? i : -1;
  }

  withPrefix(prefix: string, suffix = ''): readonly string[] {
    const out: string[] = [];
    const rows = this.section.rows;
    // Names ascend, so those with the prefix are one run: its ends by binary search (a few names
    // decoded), then a suffix test per name on the block's bytes, before any name is decoded. A
    // regex scans every value of its key this way (thousands per index, sixteen indexes a query),
    // and the first query runs this loop unoptimised.
    const lo = prefix === '' ? 0 : this.lowerBound(prefix);
    let hi = rows;
    if (prefix !== '')
      for (let a = lo; a < hi; ) {
        const mid = (a + hi) >>> 1;
        if (this.nameAt(mid).startsWith(prefix)) a = mid + 1;
        else hi = mid;
      }
    // A lone surrogate has no UTF-8 form: such a suffix is tested on the decoded names alone.
    const suf = suffix.isWellFormed() ? encoder.encode(suffix) : null;
    const per = this.section.per;
    let prev: string | null = null;
    const n = suf === null ? 0 : suf.length;
    const lastByte = n > 0 ? suf![n - 1]! : -1;
    for (let i = lo; i < hi; ) {
      const b = Math.floor(i / per);
      const { raw, base, ends } = this.section.block(b);
      const first = b * per;
      const last = Math.min(hi, first + per) - first;
      for (let k = i - first; k < last; k++) {
        if (n > 0) {
          // The row's last bytes (its last one first: it refuses most names alone). A row shorter
          // than the suffix compares bytes before it, and a false match is refused below, on the
          // decoded name.
          const end = base + ends[k]!;
          if (raw[end - 1] !== lastByte) continue;
          let m = n - 2;
          while (m >= 0 && raw[end - n + m] === suf![m]) m--;
          if (m >= 0) continue;
        }
        const s = this.nameAt(first + k);
        if (!s.endsWith(suffix)) continue;
        if (prev !== null && !(s > prev)) this.section.row(first + k).fail(`postings of ${JSON.stringify(s)} out of order or listed twice`);
        prev = s;
        out.push(s);
      }
      i = first + last;
    }
    return out;
  }

  get(name: string): Uint32Array | undefined {
    const i = this.find(name);
    return i < 0 ? undefined : this.list(i);
  }

  has(name: string): boolean {
    return this.find(name) >= 0;
  }

  *keys(): MapIterator<string> {
    for (let i = 0; i < this.section.rows; i++) yield this.nameAt(i);
  }

  *values(): MapIterator<Uint32Array> {
    for (let i = 0; i < this.section.rows; i++) yield this.list(i);
  }

  *entries(): MapIterator<[string, Uint32Array]> {
    for (let i = 0; i < this.section.rows; i++) yield [this.nameAt(i), this.list(i)];
  }

  [Symbol.iterator](): MapIterator<[string, Uint32Array]> {
    return this.entries();
  }

  forEach(fn: (value: Uint32Array, key: string, map: ReadonlyMap<string, Uint32Array>) => void): void {
    for (let i = 0; i < this.section.rows; i++) fn(this.list(i), this.nameAt(i), this);
  }
}

/** Series rows read on demand: `tag` compares string-table refs, so it decodes only the value it returns. */
class LazySeries implements SeriesTable {
  readonly onDemand = true;
  constructor(
    private readonly section: Section,
    private readonly strings: StringTable,
    private readonly keyRefs: ReadonlyMap<string, number>,
  ) {}

  get length(): number {
    return this.section.rows;
  }

  at(o: number): IndexedSeries {
    const r = this.section.row(o);
    const id = r.str();
    const metric = this.strings.get(r.uvarint());
    const n = r.count(2);
    const tags: Record<string, string> = {};
    for (let t = 0; t < n; t++) setOwn(tags, this.strings.get(r.uvarint()), this.strings.get(r.uvarint()));
    r.done();
    return { id, metric, tags };
  }

  keys(o: number): string[] {
    const r = this.section.row(o);
    r.bytes(r.uvarint());
    r.uvarint();
    const n = r.count(2);
    const out: string[] = [];
    for (let t = 0; t < n; t++) {
      out.push(this.strings.get(r.uvarint()));
      r.uvarint();
    }
    return out;
  }

  tag(o: number, key: string): string | undefined {
    const want = this.keyRefs.get(key);
    if (want === undefined) return undefined;
    const r = this.section.row(o);
    r.bytes(r.uvarint());
    r.uvarint();
    const n = r.count(2);
    for (let t = 0; t < n; t++) {
      const k = r.uvarint();
      const v = r.uvarint();
      if (k === want) return this.strings.get(v);
    }
    return undefined;
  }
}

/** 0, 1, … n-1, shared by every part that holds every series of its index (never written to). */
let counting = new Uint32Array(0);
function identity(n: number): Uint32Array {
  if (counting.length < n) {
    counting = new Uint32Array(Math.max(n, counting.length * 2));
    for (let i = 0; i < counting.length; i++) counting[i] = i;
  }
  return counting.subarray(0, n);
}

/** A part's entries: its ordinals decoded whole when first asked for, each block's rows when one of them is. */
class LazyPart implements IndexedPart {
  private decoded: Uint32Array | undefined;
  constructor(
    readonly key: string,
    readonly window: number,
    readonly earliest: number,
    readonly latest: number,
    private readonly n: number,
    private readonly ordinalBytes: Uint8Array,
    private readonly entries: Section,
    private readonly nSeries: number,
    private readonly strings: StringTable,
    private readonly layouts: readonly BlockLayout[],
  ) {}

  get bytes(): number {
    return 200 + this.n * 4 + this.entries.storedBytes * 3;
  }

  get length(): number {
    return this.n;
  }

  get ordinals(): Uint32Array {
    if (this.decoded) return this.decoded;
    if (this.ordinalBytes.length === 0) return (this.decoded = identity(this.n)); // every series of the index, in order
    const r = new ByteReader(decodeFrame(this.ordinalBytes, `${WHAT} part ${this.key}`), `${WHAT} part ${this.key}`);
    const out = new Uint32Array(this.n);
    let o = 0;
    for (let i = 0; i < this.n; i++) {
      const d = r.uvarint();
      if (i > 0 && d === 0) r.fail(`part ${this.key}: series not ascending`);
      o += d;
      if (o >= this.nSeries) r.fail(`part ${this.key}: series ${o} outside ${this.nSeries}`);
      out[i] = o;
    }
    r.done();
    return (this.decoded = out);
  }

  private range(i: number): { r: ByteReader; minTs: number; maxTs: number } {
    const r = this.entries.row(i);
    r.uvarint();
    r.uvarint();
    r.uvarint();
    const minTs = r.svarint();
    const maxTs = r.svarint();
    return { r, minTs, maxTs };
  }

  minTs(i: number): number {
    return this.range(i).minTs;
  }

  maxTs(i: number): number {
    return this.range(i).maxTs;
  }

  block(i: number): IndexedBlock {
    const r = this.entries.row(i);
    const offset = r.uvarint();
    const length = r.uvarint();
    const count = r.uvarint();
    const minTs = r.svarint();
    const maxTs = r.svarint();
    if (maxTs < minTs) r.fail(`part ${this.key}: slot ${i} has maxTs before minTs`);
    const li = r.uvarint() - 1;
    const base = { offset, length, count, minTs, maxTs };
    if (li < 0) {
      const n = r.count();
      const fields: string[] = [];
      for (let f = 0; f < n; f++) fields.push(this.strings.get(r.uvarint()));
      r.done();
      return { ...base, fields };
    }
    if (li >= this.layouts.length) r.fail(`part ${this.key}: layout ${li} outside ${this.layouts.length}`);
    const layout = this.layouts[li]!;
    const chunkLengths: number[] = [];
    let total = 0;
    for (let c = 0; c < layout.chunks.length; c++) {
      const len = r.uvarint();
      if (len < FRAME_OVERHEAD) r.fail(`part ${this.key}: chunk of ${len} bytes is shorter than a frame`);
      total += len;
      chunkLengths.push(len);
    }
    if (total !== length) r.fail(`part ${this.key}: chunks of ${total} bytes in a block of ${length}`);
    r.done();
    return { ...base, fields: indexLayout(layout).fields as string[], directory: { layout, chunkLengths } };
  }
}
