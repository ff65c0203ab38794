import type { FieldValue, SeriesColumns } from '@s4/core';
import { nameMap, own } from '@s4/core';
import { setOwn } from '../codec/bytes.js';
import { selectPaths, type Selection } from './path.js';

/** What a projection leaves of a value that has none of the selected paths. */
export const MISSING: unique symbol = Symbol('missing');

/**
 * Projection of one value (segment.md, "Projection"), the semantics every reader shares:
 * objects keep only the selected keys, in their own key order, and stay (possibly empty) once
 * reached; arrays keep their object and array elements, each projected, and drop scalar and
 * null elements, which have no keys to select; a scalar or null where a key is wanted is
 * MISSING. The shredded reader (assemble.ts) must give the same result without building the
 * whole value first; the property tests hold it to this function.
 */
export function projectValue(v: FieldValue, sel: Selection): FieldValue | typeof MISSING {
  if (sel.all) return v;
  if (v === null || typeof v !== 'object') return MISSING;
  if (Array.isArray(v)) {
    const out: FieldValue[] = [];
    for (const x of v) {
      const p = projectValue(x, sel);
      if (p !== MISSING) out.push(p);
    }
    return out;
  }
  const out: Record<string, FieldValue> = {};
  for (const k of Object.keys(v)) {
    const s = sel.keys.get(k);
    if (!s) continue;
    const p = projectValue(v[k]!, s);
    if (p !== MISSING) setOwn(out, k, p);
  }
  return out;
}

/**
 * Columns keeping only the projected paths: one column per selected field (a field no sample
 * has is a column of nulls, as for plain field names), each value projected (MISSING → null).
 */
export function projectColumns(data: SeriesColumns, paths: readonly string[]): SeriesColumns {
  const sels = selectPaths(paths, new Set(Object.keys(data.fields)));
  const fields = nameMap<FieldValue[]>();
  for (const [name, sel] of sels) {
    const col = own(data.fields, name);
    if (!col) fields[name] = new Array<FieldValue>(data.ts.length).fill(null);
    else if (sel.all) fields[name] = col;
    else
      fields[name] = col.map((v) => {
        const p = projectValue(v, sel);
        return p === MISSING ? null : p;
      });
  }
  return { ts: data.ts, fields };
}
