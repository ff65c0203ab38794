import { childPath, elementPath, escapeKey, parseColumnPath } from '../shred/path.js';
import { ColumnRole, type BlockLayout } from './types.js';

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
  /** Field names (the roots), sorted. */
  readonly fields: readonly string[];
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
  index = { columns, roles, chunkOf, firstOfChunk, ts, fields: Object.freeze(fields.sort()) };
  indexes.set(layout, index);
  return index;
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
  return JSON.stringify(layout.chunks.map((c) => c.map((col) => [col.role, col.path])));
}
