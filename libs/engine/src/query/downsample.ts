import { nameMap, type SeriesColumns } from '@s4/core';

/**
 * At most `maxPoints` samples that keep the shape of the line as a chart draws it (M4): the
 * range is cut into maxPoints/4 pixel columns and each keeps its first, last, minimum and
 * maximum sample, in time order. The shape follows the `value` field, else the first field
 * holding numbers; the kept samples carry all their fields.
 */
export function reduceToPixels(data: SeriesColumns, from: number, to: number, maxPoints: number): SeriesColumns {
  const n = data.ts.length;
  if (n <= maxPoints) return data;
  const columns = Math.max(1, Math.floor(maxPoints / 4));
  const width = Math.ceil((to - from) / columns);
  const shapeName = Object.hasOwn(data.fields, 'value') ? 'value' : Object.keys(data.fields).find((f) => data.fields[f]!.some((v) => typeof v === 'number'));
  const shape = shapeName ? data.fields[shapeName]! : null;
  const keep = new Set<number>();
  let i = 0;
  while (i < n) {
    const col = Math.floor((data.ts[i]! - from) / width);
    let j = i;
    let lo = -1;
    let hi = -1;
    while (j < n && Math.floor((data.ts[j]! - from) / width) === col) {
      const v = shape?.[j];
      if (typeof v === 'number' && !Number.isNaN(v)) {
        if (lo < 0 || v < (shape![lo] as number)) lo = j;
        if (hi < 0 || v > (shape![hi] as number)) hi = j;
      }
      j++;
    }
    keep.add(i).add(j - 1);
    if (lo >= 0) keep.add(lo).add(hi);
    i = j;
  }
  const idx = [...keep].sort((a, b) => a - b);
  const fields: SeriesColumns['fields'] = nameMap();
  for (const [f, col] of Object.entries(data.fields)) fields[f] = idx.map((k) => col[k]!);
  return { ts: idx.map((k) => data.ts[k]!), fields };
}
