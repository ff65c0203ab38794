import type { FieldValue, SeriesColumns } from '@s4/core';
import { CorruptDataError, nameMap } from '@s4/core';
import { ByteReader, ByteWriter, concatBytes } from '../codec/bytes.js';
import { decodeColumnBody, encodeColumnBody } from '../codec/column.js';
import { decodeFrame, encodeFrame, ZSTD_LEVEL } from '../codec/frame.js';
import { decodeTimestamps, encodeTimestamps } from '../codec/timestamps.js';
import { zstdCompress } from '../codec/zstd.js';
import { assembleField, fieldWriter } from '../shred/assemble.js';
import type { JsonBytes } from '../shred/json-bytes.js';
import { decodeNode, elementCount, memberCounts, type NodeColumn } from '../shred/nodes.js';
import { childPath, elementPath, escapeKey, selectAll, selectPaths, type Selection } from '../shred/path.js';
import { MISSING, projectValue } from '../shred/project.js';
import { Kind, shredField } from '../shred/shred.js';
import { sliceNode } from '../shred/slice.js';
import { unpackedColumn } from '../hotlog/packed.js';
import { decodeBlockV1 } from './block-v1.js';
import { asCorrupt, checkEntry, checkTimestamps } from './checks.js';
import { indexLayout, ROW_GROUP_SPANS, type LayoutIndex } from './layout.js';
import { ColumnRole, type BlockDirectory, type FooterEntry, type LayoutColumn } from './types.js';

export const BLOCK_V2 = 2;
const WHAT = 'segment block';
/**
 * A column of at least this many bytes (before compression) gets a chunk of its own; smaller
 * ones share chunks of about this size, so that a projection fetches at most that much of
 * columns it did not ask for, and tiny blocks pay one frame, not one per column.
 */
export const CHUNK_BYTES = 512;
/**
 * In `auto` mode a nested field with at least this many samples per shredded column is shredded
 * without comparing sizes (measured on DirtMate-shaped records: the same bytes within 0.02 %,
 * half the encoding time).
 */
const SAMPLES_PER_COLUMN_REGULAR = 16;
/** Footer bytes a directory entry costs, charged to shredding when choosing it. */
const DIRECTORY_BYTES_PER_COLUMN = 4;

interface Column {
  role: ColumnRole;
  path: string;
  body: Uint8Array;
}

/** How nested fields are stored: measured per field (the default), always shredded where possible, or never. */
export type ShredMode = 'auto' | 'always' | 'never';

export interface BlockOptions {
  /** zstd level of the chunks. */
  level?: number;
  shred?: ShredMode;
  /** Version 3: samples a row group holds at least, on average (GROUP_ROWS). */
  groupRows?: number;
  /** Version 3: values (samples × fields) a block of numbers only holds at least to be split (GROUP_NUMBER_CELLS). */
  groupNumberCells?: number;
  /** Version 4: float32 decimals may be chosen for numbers (segment.md, encoding 7). */
  float32?: boolean;
}

export interface EncodedBlock {
  bytes: Uint8Array;
  /** The column directory, for the block's footer entry. */
  directory: BlockDirectory;
}

/**
 * One series' samples as a version 2 block: the timestamp column and one column per field, or
 * per path of a shredded field, packed into chunks (segment.md, "Block, version 2").
 */
export function encodeBlockV2(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>, options: BlockOptions = {}): EncodedBlock {
  checkTimestamps(ts);
  const { frames, chunks } = encodeChunks(ts, fields, options, false);
  return { bytes: concatBytes(frames), directory: { layout: { chunks }, chunkLengths: frames.map((f) => f.length) } };
}

/**
 * One series' samples as a version 3 block: row groups of about `groupRows` samples or more, each
 * a slot of time laid out as a version 2 block of its own (its timestamp column led by its sample
 * count), so that a read of part of the block decodes only the groups it overlaps (segment.md,
 * "Row groups"). A block too small for two groups is a version 2 block.
 */
export function encodeBlockV3(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>, options: BlockOptions = {}): EncodedBlock {
  checkTimestamps(ts);
  const span = groupSpan(ts, options.groupRows ?? GROUP_ROWS);
  if (span === null || fewNumbers(ts.length, fields, options.groupNumberCells ?? GROUP_NUMBER_CELLS)) return encodeBlockV2(ts, fields, options);
  const frames: Uint8Array[] = [];
  const chunks: (readonly LayoutColumn[])[] = [];
  const slots: number[] = [];
  const firstChunk: number[] = [0];
  const base = Math.floor(ts[0]! / span);
  const names = Object.keys(fields);
  for (let lo = 0; lo < ts.length; ) {
    const slot = Math.floor(ts[lo]! / span);
    let hi = lo + 1;
    while (hi < ts.length && Math.floor(ts[hi]! / span) === slot) hi++;
    const part = Object.create(null) as Record<string, readonly FieldValue[]>;
    for (const name of names) part[name] = fields[name]!.slice(lo, hi);
    const g = encodeChunks(ts.slice(lo, hi), part, options, true);
    for (const f of g.frames) frames.push(f);
    for (const c of g.chunks) chunks.push(c);
    slots.push(slot - base);
    firstChunk.push(chunks.length);
    lo = hi;
  }
  return { bytes: concatBytes(frames), directory: { layout: { chunks, groups: { span, slots, firstChunk } }, chunkLengths: frames.map((f) => f.length) } };
}

/** Samples a row group holds at least, on average, by default: see segment.md, "Row groups", for the measurements. */
export const GROUP_ROWS = 512;
/**
 * A block of numbers only (every value a number or null) is split into row groups only from this
 * many values: an hour of one float at 1 Hz is ~3 KB, decoded whole in well under a millisecond,
 * and six 10-minute groups made it 19 % larger (0.80 -> 0.96 bytes a sample on the float bench).
 */
export const GROUP_NUMBER_CELLS = 32_768;

/** Whether the block is numbers only and holds fewer than `cells` values. */
function fewNumbers(n: number, fields: Readonly<Record<string, readonly FieldValue[]>>, cells: number): boolean {
  const columns = Object.values(fields);
  if (n * columns.length >= cells) return false;
  for (const col of columns) for (let i = 0; i < n; i++) if (col[i] !== null && typeof col[i] !== 'number') return false;
  return true;
}

/**
 * Row groups a block aims at, at most: each group repeats the block's chunk lengths in the footer
 * entry, so a day object of 1 Hz records split in 10-minute groups would have a footer 144 times
 * that of one block; twelve keep it near that of an hour part (six groups at 1 Hz).
 */
const MAX_GROUPS = 12;

/**
 * The shortest span whose slots hold `groupRows` samples or more (and a twelfth of the block) at
 * the block's average rate, or null when that leaves fewer than two groups.
 */
function groupSpan(ts: readonly number[], groupRows: number): number | null {
  const n = ts.length;
  if (n < 2 * groupRows) return null;
  const rows = Math.max(groupRows, Math.ceil(n / MAX_GROUPS));
  const perMs = n / (ts[n - 1]! - ts[0]! + 1);
  for (const span of ROW_GROUP_SPANS) {
    if (span * perMs < rows) continue;
    return Math.floor(ts[n - 1]! / span) > Math.floor(ts[0]! / span) ? span : null;
  }
  return null;
}

/**
 * Columns and chunk payloads are written here one at a time and copied out (a column's body by
 * finish, a payload into its frame) before the next is written: a flush of many small series
 * made four writers a series.
 */
const scratch = new ByteWriter(4096);

/** The chunks of one version 2 block (or row group: `counted`, its timestamp column led by its count). */
function encodeChunks(ts: readonly number[], fields: Readonly<Record<string, readonly FieldValue[]>>, options: BlockOptions, counted: boolean): { frames: Uint8Array[]; chunks: LayoutColumn[][] } {
  const level = options.level ?? ZSTD_LEVEL;
  const mode = options.shred ?? 'auto';
  const n = ts.length;
  const tw = scratch.reset();
  if (counted) tw.uvarint(n);
  encodeTimestamps(ts, tw);
  const columns: Column[] = [{ role: ColumnRole.Timestamps, path: '', body: tw.finish() }];
  for (const name of Object.keys(fields).sort()) {
    const col = fields[name]!;
    if (col.length !== n) throw new RangeError(`field ${name} has ${col.length} values for ${n} timestamps`);
    for (const c of fieldColumns(name, col, level, mode, options.float32 === true)) columns.push(c);
  }
  const frames: Uint8Array[] = [];
  const layout: LayoutColumn[][] = [];
  // Chunk payload: the sizes of all columns but the last (which takes the rest), then the columns.
  const emit = (cols: Column[]) => {
    const w = scratch.reset();
    for (let k = 0; k < cols.length - 1; k++) w.uvarint(cols[k]!.body.length);
    for (const c of cols) w.bytes(c.body);
    frames.push(encodeFrame(w.written(), level));
    layout.push(cols.map((c) => ({ role: c.role, path: c.path })));
  };
  // Small columns first, right after the timestamps, packed into shared chunks; then each large
  // column in a chunk of its own. A projection's ancestors are small, so it usually reads one
  // range at the block's start and one per large column it needs.
  const [tsColumn, ...rest] = columns;
  const small = rest.filter((c) => c.body.length < CHUNK_BYTES);
  const large = rest.filter((c) => c.body.length >= CHUNK_BYTES);
  let pending: Column[] = [];
  let pendingBytes = 0;
  if (tsColumn!.body.length >= CHUNK_BYTES) emit([tsColumn!]);
  else small.unshift(tsColumn!);
  for (const c of small) {
    pending.push(c);
    pendingBytes += c.body.length;
    if (pendingBytes >= CHUNK_BYTES) {
      emit(pending);
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pending.length > 0) emit(pending);
  for (const c of large) emit([c]);
  return { frames, chunks: layout };
}

/**
 * A field's columns: one plain column (a version 1 encoding) for scalars; for nested values the
 * shredded columns, unless they would take more bytes than the plain column (irregular shapes).
 */
function fieldColumns(name: string, col: readonly FieldValue[], level: number, mode: ShredMode, float32: boolean): Column[] {
  const plain = (): Column => {
    const w = scratch.reset();
    // Only a nested column can hold PackedValues (they are objects): a scalar column is written as it is.
    encodeColumnBody(w, nested ? unpackedColumn(col) : col, float32);
    return { role: ColumnRole.Field, path: escapeKey(name), body: w.finish() };
  };
  let nested = false;
  for (const v of col) {
    if (v !== null && typeof v === 'object') {
      nested = true;
      break;
    }
  }
  if (!nested || mode === 'never') return [plain()];
  const shredded = shredField(name, col, float32);
  if (!shredded) return [plain()];
  const columns = shredded.map((s): Column => ({ role: ColumnRole.Node, path: s.path, body: s.body }));
  if (mode === 'always') return columns;
  // Records of a regular shape (few columns for many samples) always shred smaller, and asking
  // (encoding the field whole and compressing both) cost as much as the shredding itself.
  if (columns.length * SAMPLES_PER_COLUMN_REGULAR <= col.length) return columns;
  const whole = plain();
  let raw = 0;
  for (const c of columns) raw += c.body.length;
  // Four times smaller before compression: shredding wins without asking the compressor.
  if (raw * 4 <= whole.body.length) return columns;
  const w = scratch.reset();
  for (const c of columns) w.bytes(c.body);
  const shreddedCost = compressedSize(w.written(), level) + DIRECTORY_BYTES_PER_COLUMN * columns.length;
  return shreddedCost < compressedSize(whole.body, level) + DIRECTORY_BYTES_PER_COLUMN ? columns : [whole];
}

const compressedSize = (b: Uint8Array, level: number) => (b.length <= 32 ? b.length : zstdCompress(b, level).length);

/** Column paths a selection needs below (and including) `path`, found from the layout alone. */
function neededPaths(index: LayoutIndex, path: string, sel: Selection, out: Set<string>): void {
  if (!index.columns.has(path)) return;
  out.add(path);
  if (sel.all) {
    for (const p of index.columns.keys()) if (p.startsWith(`${path}.`) || p.startsWith(`${path}[]`)) out.add(p);
    return;
  }
  neededPaths(index, elementPath(path), sel, out);
  for (const [k, s] of sel.keys) neededPaths(index, childPath(path, k), s, out);
}

/** The columns a read needs, and the chunks holding them. */
function plan(d: BlockDirectory, sels: ReadonlyMap<string, Selection> | null): { index: LayoutIndex; paths: Set<string>; chunks: Set<number> } {
  const index = indexLayout(d.layout);
  const paths = new Set<string>();
  if (sels) for (const [field, sel] of sels) neededPaths(index, escapeKey(field), sel, paths);
  else for (const p of index.columns.keys()) paths.add(p);
  const chunks = new Set<number>([index.chunkOf[index.ts]!]);
  for (const p of paths) chunks.add(index.chunkOf[index.columns.get(p)!]!);
  return { index, paths, chunks };
}

const chunkOffset = (d: BlockDirectory, c: number) => {
  let at = 0;
  for (let k = 0; k < c; k++) at += d.chunkLengths[k]!;
  return at;
};

export interface ByteRange {
  offset: number;
  length: number;
}

/**
 * The byte ranges of the object a read of `paths` (projection paths, as selectPaths takes them;
 * all columns when omitted) needs from this block, adjacent chunks merged: of a row-grouped block
 * from row group `group` only (groupsOf), else from all of them. A version 1 block is one range,
 * the whole block.
 */
export function columnRanges(e: FooterEntry, paths?: readonly string[], group?: number): ByteRange[] {
  const d = e.directory;
  if (!d) return [{ offset: e.offset, length: e.length }];
  const out: ByteRange[] = [];
  const groups = d.layout.groups ? (group === undefined ? d.layout.groups.slots.map((_, g) => g) : [group]) : [-1];
  for (const g of groups) {
    const { directory, offset } = g < 0 ? { directory: d, offset: e.offset } : groupDirectory(e, g);
    const { chunks } = plan(directory, paths ? selectPaths(paths, new Set(e.fields)) : null);
    for (const c of [...chunks].sort((a, b) => a - b)) {
      const at = offset + chunkOffset(directory, c);
      const length = directory.chunkLengths[c]!;
      const last = out[out.length - 1];
      if (last && last.offset + last.length === at) last.length += length;
      else out.push({ offset: at, length });
    }
  }
  return out;
}

/**
 * The row groups of a block that hold samples of [from, to), or [-1] when the block has none (it
 * is read whole). Found from the footer entry alone.
 */
export function groupsOf(e: FooterEntry, from = -Infinity, to = Infinity): number[] {
  const g = e.directory?.layout.groups;
  if (!g) return [-1];
  const base = Math.floor(e.minTs / g.span);
  const out: number[] = [];
  g.slots.forEach((slot, i) => {
    const start = (base + slot) * g.span;
    if (start < to && start + g.span > from) out.push(i);
  });
  return out;
}

/** Row group g of a block as a version 2 block's directory, and where it starts in the object. */
function groupDirectory(e: FooterEntry, g: number): { directory: BlockDirectory; offset: number } {
  const d = e.directory!;
  const groups = indexLayout(d.layout).groups;
  if (!groups || g < 0 || g >= groups.length) throw new RangeError(`block of ${e.id} has no row group ${g}`);
  const first = d.layout.groups!.firstChunk[g]!;
  const lengths = d.chunkLengths.slice(first, d.layout.groups!.firstChunk[g + 1]);
  return { directory: { layout: groups[g]!, chunkLengths: lengths }, offset: e.offset + chunkOffset(d, first) };
}

/** A field as read from a block: a plain column of whole values, or shredded node columns. */
export type FieldColumn = { readonly kind: 'values'; readonly values: readonly FieldValue[] } | { readonly kind: 'shredded'; readonly root: NodeColumn };

/**
 * Columns of one block as decoded, before any record is built: what a server streams from
 * (columnWriter) or assembles into values (assemble). Read-only; may be cached and shared.
 */
export interface BlockColumns {
  readonly ts: readonly number[];
  /** The fields read (the selected ones, or all), in selection order or name order. */
  readonly fields: ReadonlyMap<string, FieldColumn>;
  /** Per field, what to keep; null when every field is kept whole. */
  readonly selection: ReadonlyMap<string, Selection> | null;
}

/**
 * As decodeBlockColumns takes it: projection paths (selectPaths), ROOTS_ONLY, or all columns when
 * omitted.
 */
export type Projection = readonly string[] | typeof ROOTS_ONLY;

/**
 * Every field's root value only: of a shredded field its root node column (and the element nodes
 * of its arrays), none of its members. What numberColumns needs.
 */
export const ROOTS_ONLY: unique symbol = Symbol('roots only');
const ROOT: Selection = Object.freeze({ all: false, keys: new Map<string, Selection>() });

function selectionFor(e: FooterEntry, paths: Projection | undefined): Map<string, Selection> | null {
  if (paths === undefined) return null;
  if (paths === ROOTS_ONLY) return new Map(e.fields.map((f) => [f, ROOT]));
  return selectPaths(paths, new Set(e.fields));
}

/**
 * Each field's numbers, as rollups aggregate them, from columns decoded with ROOTS_ONLY: a sample's
 * value where it is a number, null where a shredded field holds anything else there (a plain
 * column's values are passed as they are: the aggregation skips what is not a number). A record's
 * members are not numbers of its field, and rebuilding every record to find none was most of the
 * rollups' CPU on the records workload.
 */
export function numberColumns(cols: BlockColumns): SeriesColumns {
  const fields = nameMap<FieldValue[]>();
  for (const [name, f] of cols.fields) {
    if (f.kind === 'values') {
      fields[name] = f.values as FieldValue[];
      continue;
    }
    const { root } = f;
    const out = new Array<FieldValue>(root.count);
    let j = 0;
    for (let i = 0; i < root.count; i++) out[i] = (root.kinds ? root.kinds[i] : root.kind) === Kind.Num ? root.nums[j++]! : null;
    fields[name] = out;
  }
  return { ts: cols.ts as number[], fields };
}

/**
 * Decodes only the columns that `paths` need (all when omitted). `bytes` holds the object's
 * bytes from offset `at` (default: the block's own offset) and must cover the ranges
 * columnRanges returned; chunks outside them are never read. Checksum-verified.
 */
export function decodeBlockColumns(bytes: Uint8Array, e: FooterEntry, paths?: Projection, at = e.offset): BlockColumns {
  const sels = selectionFor(e, paths);
  const d = e.directory;
  if (!d) {
    const data = decodeBlockV1(bytes.subarray(e.offset - at, e.offset - at + e.length), e);
    const fields = new Map<string, FieldColumn>();
    for (const name of sels ? sels.keys() : e.fields) {
      const values = Object.hasOwn(data.fields, name) ? data.fields[name]! : new Array<FieldValue>(data.ts.length).fill(null);
      fields.set(name, { kind: 'values', values });
    }
    return { ts: data.ts, fields, selection: sels };
  }
  if (d.layout.groups) throw new RangeError(`block of ${e.id} has row groups: decode them with decodeGroupColumns`);
  const cols = decodeChunks(bytes, e, d, e.offset, sels, at, false);
  const { ts } = cols;
  const n = ts.length;
  if (n > 0 ? ts[0] !== e.minTs || ts[n - 1] !== e.maxTs : e.minTs !== 0 || e.maxTs !== 0) throw new CorruptDataError(WHAT, `block of ${e.id} disagrees with its footer entry`);
  return cols;
}

/**
 * Row group `g` (groupsOf) of a version 3 block, as decodeBlockColumns decodes a whole block:
 * `bytes` holds the object from offset `at` and must cover columnRanges(e, paths, g).
 */
export function decodeGroupColumns(bytes: Uint8Array, e: FooterEntry, g: number, paths?: Projection, at = e.offset): BlockColumns {
  const sels = selectionFor(e, paths);
  const { directory, offset } = groupDirectory(e, g);
  const cols = decodeChunks(bytes, e, directory, offset, sels, at, true);
  const { ts } = cols;
  const n = ts.length;
  const groups = e.directory!.layout.groups!;
  const start = (Math.floor(e.minTs / groups.span) + groups.slots[g]!) * groups.span;
  // The group's samples lie in its slot and inside the block; the first and last group hold the block's ends.
  const ok = n > 0 && ts[0]! >= Math.max(start, e.minTs) && ts[n - 1]! < start + groups.span && ts[n - 1]! <= e.maxTs && (g > 0 || ts[0] === e.minTs) && (g < groups.slots.length - 1 || ts[n - 1] === e.maxTs);
  if (!ok) throw new CorruptDataError(WHAT, `row group ${g} of ${e.id} disagrees with its footer entry`);
  return cols;
}

/**
 * The columns of a version 2 block, or of a row group (`counted`: its timestamp column leads with
 * its sample count), whose chunks start at `offset` of the object.
 */
function decodeChunks(bytes: Uint8Array, e: FooterEntry, d: BlockDirectory, offset: number, sels: ReadonlyMap<string, Selection> | null, at: number, counted: boolean): BlockColumns {
  const { index, paths: wanted, chunks } = plan(d, sels);
  for (const c of chunks) {
    const start = offset + chunkOffset(d, c) - at;
    // A caller's mistake, not corruption: the bytes given do not cover what columnRanges asked for.
    if (start < 0 || start + d.chunkLengths[c]! > bytes.length) throw new RangeError(`chunk ${c} of ${e.id} lies outside the bytes given (${start}+${d.chunkLengths[c]} of ${bytes.length})`);
  }
  try {
    // Per needed chunk: its payload and where each of its columns starts in it (the last column takes the rest).
    const columnsAt = new Map<number, { payload: Uint8Array; starts: number[] }>();
    for (const c of chunks) {
      const start = offset + chunkOffset(d, c) - at;
      const payload = decodeFrame(bytes.subarray(start, start + d.chunkLengths[c]!), WHAT);
      const r = new ByteReader(payload, WHAT);
      const k = index.firstOfChunk[c + 1]! - index.firstOfChunk[c]!;
      const sizes: number[] = [];
      for (let j = 0; j < k - 1; j++) sizes.push(r.uvarint());
      const starts = [r.pos];
      for (const size of sizes) starts.push(starts[starts.length - 1]! + size);
      if (starts[k - 1]! > payload.length) r.fail(`chunk ${c} of ${e.id}: column sizes exceed its ${payload.length} bytes`);
      starts.push(payload.length);
      columnsAt.set(c, { payload, starts });
    }
    const reader = (i: number) => {
      const c = index.chunkOf[i]!;
      const { payload, starts } = columnsAt.get(c)!;
      const j = i - index.firstOfChunk[c]!;
      return new ByteReader(payload, WHAT, starts[j], starts[j + 1]);
    };
    const tr = reader(index.ts);
    const n = counted ? tr.uvarint() : e.count;
    if (n > e.count) tr.fail(`${n} samples in a group of a block of ${e.count}`);
    if (n > tr.remaining) tr.fail(`${n} timestamps in ${tr.remaining} bytes`);
    const ts = decodeTimestamps(tr, n);
    tr.done();
    const used = new Set<string>();
    const fields = new Map<string, FieldColumn>();
    for (const [name, sel] of sels ?? e.fields.map((f) => [f, selectAll()] as const)) {
      const root = escapeKey(name);
      const i = index.columns.get(root);
      if (i === undefined) {
        fields.set(name, { kind: 'values', values: new Array<FieldValue>(n).fill(null) });
        continue;
      }
      if (index.roles[i] === ColumnRole.Field) {
        const r = reader(i);
        fields.set(name, { kind: 'values', values: decodeColumnBody(r, n, name) });
        r.done();
        used.add(root);
      } else {
        const node = decodeTree(root, n, sel, (p) => {
          const k = index.columns.get(p);
          if (k === undefined || index.roles[k] !== ColumnRole.Node || !wanted.has(p)) throw new CorruptDataError(WHAT, `block of ${e.id}: column ${p} is missing from the directory`);
          used.add(p);
          return reader(k);
        });
        fields.set(name, { kind: 'shredded', root: node });
      }
    }
    if (!sels && used.size !== index.columns.size) throw new CorruptDataError(WHAT, `block of ${e.id}: ${index.columns.size - used.size} columns belong to no field`);
    return { ts, fields, selection: sels };
  } catch (err) {
    throw asCorrupt(WHAT, err);
  }
}

function decodeTree(path: string, count: number, sel: Selection, open: (path: string) => ByteReader): NodeColumn {
  const r = open(path);
  const node = decodeNode(r, path, count);
  r.done();
  const hasArrays = node.kind === Kind.Arr || (node.kinds !== null && node.lens.length > 0);
  if (hasArrays) {
    const elems = elementCount(node);
    if (elems > 0) node.elem = decodeTree(elementPath(path), elems, sel, open);
  }
  if (node.shapes.length > 0) {
    for (const [k, cnt] of memberCounts(node)) {
      const s = sel.all ? sel : sel.keys.get(k);
      if (s) node.children.set(k, decodeTree(childPath(path, k), cnt, s, open));
    }
  }
  return node;
}

/** Values of each field, projected by the columns' selection: records built from columns. */
export function assemble(cols: BlockColumns): SeriesColumns {
  const fields = nameMap<FieldValue[]>();
  for (const [name, f] of cols.fields) {
    const sel = cols.selection?.get(name) ?? selectAll();
    if (f.kind === 'shredded') fields[name] = assembleField(f.root, sel);
    else if (sel.all) fields[name] = f.values as FieldValue[];
    else
      fields[name] = f.values.map((v) => {
        const p = projectValue(v, sel);
        return p === MISSING ? null : p;
      });
  }
  return { ts: cols.ts as number[], fields };
}

/**
 * Writes one field's (projected) value of each sample as JSON text (JSON.stringify's: NaN and
 * ±Infinity as null, −0 as 0), sample after sample, straight from the columns: `next(out,
 * prefix)` writes `prefix` and the next sample's value, or nothing and false where the (projected)
 * value is null, so that a writer can leave such samples out (NDJSON) or write null (JSON).
 */
export function columnWriter(cols: BlockColumns, field: string): (out: JsonBytes, prefix: Uint8Array) => boolean {
  const f = cols.fields.get(field);
  if (!f) throw new RangeError(`field ${field} was not read`);
  const sel = cols.selection?.get(field) ?? selectAll();
  if (f.kind === 'shredded') return fieldWriter(f.root, sel);
  const values = f.values;
  let i = 0;
  return (out, prefix) => {
    const v = values[i++]!;
    const p = sel.all ? v : projectValue(v, sel);
    if (p === MISSING || p === null) return false;
    out.bytes(prefix);
    if (typeof p === 'number') out.number(p);
    else if (typeof p === 'string') out.string(p);
    else out.text(JSON.stringify(p));
    return true;
  };
}

/** Samples [lo, hi) of decoded columns, sharing what can be shared (shredded fields are sliced by sliceNode). */
export function sliceColumns(cols: BlockColumns, lo: number, hi: number): BlockColumns {
  if (lo === 0 && hi === cols.ts.length) return cols;
  const fields = new Map<string, FieldColumn>();
  for (const [name, f] of cols.fields) fields.set(name, f.kind === 'values' ? { kind: 'values', values: f.values.slice(lo, hi) } : { kind: 'shredded', root: sliceNode(f.root, lo, hi) });
  return { ts: cols.ts.slice(lo, hi), fields, selection: cols.selection };
}

/**
 * Whole decoded columns (no selection) seen through a projection, as decodeBlockColumns with
 * `paths` would decode them: one field per selected name, a field no sample has being nulls.
 */
export function projectBlockColumns(cols: BlockColumns, paths: readonly string[]): BlockColumns {
  if (cols.selection) throw new RangeError('columns already projected');
  const sels = selectPaths(paths, new Set(cols.fields.keys()));
  const fields = new Map<string, FieldColumn>();
  for (const name of sels.keys()) fields.set(name, cols.fields.get(name) ?? { kind: 'values', values: new Array<FieldValue>(cols.ts.length).fill(null) });
  return { ts: cols.ts, fields, selection: sels };
}

/** Roughly what decoded columns occupy in memory (for a cache's byte budget). */
export function blockColumnsBytes(cols: BlockColumns): number {
  let n = 64 + cols.ts.length * 8;
  const node = (c: NodeColumn): number => {
    let b = 96 + c.path.length * 2 + (c.kinds?.length ?? 0) + c.nums.length * 8 + c.bools.length + c.lens.length * 4 + (c.shapeIds?.length ?? 0) * 4;
    // Strings come from a dictionary: each sample holds a reference, each distinct string is stored once.
    b += c.strs.length * 8;
    const distinct = new Set<string>(c.strs);
    for (const s of distinct) b += 16 + s.length * 2;
    for (const keys of c.shapes) for (const k of keys) b += 16 + k.length * 2;
    if (c.elem) b += node(c.elem);
    for (const child of c.children.values()) b += node(child);
    return b;
  };
  for (const f of cols.fields.values()) {
    if (f.kind === 'shredded') n += node(f.root);
    else {
      n += 32 + f.values.length * 8;
      const sample = f.values.find((v) => v !== null && typeof v !== 'number' && typeof v !== 'boolean');
      // Whole nested values (not shredded) are object graphs: several times their JSON text.
      if (sample !== undefined) n += f.values.length * (typeof sample === 'string' ? sample.length * 2 + 16 : JSON.stringify(sample).length * 6);
    }
  }
  return n;
}

/** Whole version 2 or 3 block: every column (of every row group), checked against the entry. */
export function decodeBlockV2(bytes: Uint8Array, e: FooterEntry): SeriesColumns {
  if (!e.directory?.layout.groups) {
    const out = assemble(decodeBlockColumns(bytes, e, undefined, e.offset));
    checkEntry(e, out.ts, e.fields);
    return out;
  }
  const parts = groupsOf(e).map((g) => assemble(decodeGroupColumns(bytes, e, g, undefined, e.offset)));
  const ts: number[] = [];
  const fields = nameMap<FieldValue[]>();
  for (const name of e.fields) fields[name] = [];
  for (const p of parts) {
    for (const t of p.ts) ts.push(t);
    for (const name of e.fields) {
      const out = fields[name]!;
      for (const v of p.fields[name]!) out.push(v);
    }
  }
  checkEntry(e, ts, e.fields);
  return { ts, fields };
}
