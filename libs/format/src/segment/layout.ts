import { childPath, elementPath, escapeKey, parseColumnPath } from '../shred/path.js';
import { ColumnRole, type BlockLayout, type RowGroups } from './types.js';

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
/** Spans a row group may cover: each divides an hour or a day, so groups never straddle a window. */
export const ROW_GROUP_SPANS: readonly number[] = [SECOND, 5 * SECOND, 10 * SECOND, 15 * SECOND, 30 * SECOND, MINUTE, 2 * MINUTE, 5 * MINUTE, 10 * MINUTE, 15 * MINUTE, 20 * MINUTE, 30 * MINUTE, HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR];

/** A layout's columns by path and by chunk, computed once per layout and shared by every entry using it. */
export interface LayoutIndex {
  /** Flat column index (layout order) of each path; the timestamps are not in it. */
  readonly columns: ReadonlyMap<string, number>;
  readonly roles: readonly ColumnRole[];
  /** Chunk of each flat column. */
  readonly chunkOf: readonly number[];
  /** Flat index of each chunk's first column; one more entry, the column count, at the end. */
  readonly firstOfChunk: readonly number[];
  /** Flat index of the timestamp column. */
  readonly ts: number;
  /** Field names (the roots), sorted; of a row-grouped layout, those of any group. */
  readonly fields: readonly string[];
  /** A row-grouped layout: each group's chunks as a layout of its own (the fields above are then empty). */
  readonly groups: readonly BlockLayout[] | null;
}

const indexes = new WeakMap<BlockLayout, LayoutIndex>();

/**
 * Checks a layout and indexes it: one timestamp column, unique paths that parse, plain (Field)
 * columns only at a field's root, every node below a root has its parent node. Throws RangeError
 * naming the problem (decoders turn it into CorruptDataError).
 */
export function indexLayout(layout: BlockLayout): LayoutIndex {
  let index = indexes.get(layout);
  if (index) return index;
  if (layout.groups) {
    index = indexGroups(layout, layout.groups);
    indexes.set(layout, index);
    return index;
  }
  const columns = new Map<string, number>();
  const roles: ColumnRole[] = [];
  const chunkOf: number[] = [];
  const firstOfChunk: number[] = [];
  const parents: [string, string][] = [];
  const fields: string[] = [];
  let ts = -1;
  if (layout.chunks.length === 0) throw new RangeError('layout without chunks');
  layout.chunks.forEach((chunk, c) => {
    if (chunk.length === 0) throw new RangeError(`layout chunk ${c} holds no column`);
    firstOfChunk.push(roles.length);
    for (const col of chunk) {
      const i = roles.length;
      roles.push(col.role);
      chunkOf.push(c);
      if (col.role === ColumnRole.Timestamps) {
        if (ts >= 0) throw new RangeError('layout with two timestamp columns');
        if (col.path !== '') throw new RangeError('timestamp column with a path');
        ts = i;
        continue;
      }
      if (col.role !== ColumnRole.Field && col.role !== ColumnRole.Node) throw new RangeError(`unknown column role ${String(col.role)}`);
      if (columns.has(col.path)) throw new RangeError(`column ${col.path} listed twice`);
      columns.set(col.path, i);
      const parent = parentOf(col.path);
      if (parent === null) fields.push(parseColumnPath(col.path)[0]);
      else if (col.role === ColumnRole.Field) throw new RangeError(`plain column ${col.path} below a field's root`);
      else parents.push([col.path, parent]);
    }
  });
  firstOfChunk.push(roles.length);
  if (ts < 0) throw new RangeError('layout without a timestamp column');
  for (const [path, parent] of parents) {
    const p = columns.get(parent);
    if (p === undefined || roles[p] !== ColumnRole.Node) throw new RangeError(`column ${path} has no parent column ${parent}`);
  }
  // Shared by every entry of the layout (as FooterEntry.fields): frozen, so no reader can change another's.
  index = { columns, roles, chunkOf, firstOfChunk, ts, fields: Object.freeze(fields.sort()), groups: null };
  indexes.set(layout, index);
  return index;
}

/** A row-grouped layout: checks its groups and indexes each group's chunks as a layout of its own. */
function indexGroups(layout: BlockLayout, g: RowGroups): LayoutIndex {
  if (!ROW_GROUP_SPANS.includes(g.span)) throw new RangeError(`row group span ${g.span} is not one of ${ROW_GROUP_SPANS.join(', ')}`);
  const n = g.slots.length;
  if (n < 2) throw new RangeError(`${n} row groups: a block of one group is not grouped`);
  if (g.firstChunk.length !== n + 1 || g.firstChunk[0] !== 0 || g.firstChunk[n] !== layout.chunks.length) throw new RangeError('row groups do not cover the chunks');
  const groups: BlockLayout[] = [];
  const fields = new Set<string>();
  for (let i = 0; i < n; i++) {
    if (i === 0 ? g.slots[0] !== 0 : !(g.slots[i]! > g.slots[i - 1]!)) throw new RangeError(`row group ${i}: slot ${g.slots[i]} out of order`);
    if (!Number.isSafeInteger(g.slots[i])) throw new RangeError(`row group ${i}: slot ${g.slots[i]}`);
    if (!(g.firstChunk[i + 1]! > g.firstChunk[i]!)) throw new RangeError(`row group ${i} holds no chunk`);
    const sub: BlockLayout = { chunks: layout.chunks.slice(g.firstChunk[i], g.firstChunk[i + 1]) };
    for (const f of indexLayout(sub).fields) fields.add(f);
    groups.push(sub);
  }
  return { columns: new Map(), roles: [], chunkOf: [], firstOfChunk: [], ts: -1, fields: Object.freeze([...fields].sort()), groups };
}

/** The column path one step up, or null for a field's root. */
function parentOf(path: string): string | null {
  const steps = parseColumnPath(path);
  if (steps.length === 1) return null;
  let parent = escapeKey(steps[0]);
  for (let i = 1; i < steps.length - 1; i++) parent = steps[i] === null ? elementPath(parent) : childPath(parent, steps[i]!);
  return parent;
}

/** A stable text key of a layout, so that a footer stores each distinct layout once. */
export function layoutKey(layout: BlockLayout): string {
  const chunks = layout.chunks.map((c) => c.map((col) => [col.role, col.path]));
  const g = layout.groups;
  return JSON.stringify(g ? [chunks, g.span, g.slots, g.firstChunk] : chunks);
}
