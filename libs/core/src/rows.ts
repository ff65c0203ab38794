/**
 * Tables that hold a row per series in typed arrays rather than an object per series (the hot
 * tier's series and logs, the write path's key texts and marks, the cardinality counts): a
 * typed array is one object for the collector however many rows it holds.
 */

type Column = Int32Array | Float64Array | Uint8Array;

/** A copy of `column` with room for `rows` rows (its rows kept, the rest zero). */
export function grown<T extends Column>(column: T, rows: number): T {
  const out = new (column.constructor as new (n: number) => T)(rows);
  out.set(column.subarray(0, Math.min(column.length, rows)));
  return out;
}
