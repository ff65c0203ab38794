import type { Column, FieldValue, SeriesColumns } from '@s4/sdk';

const BLOCKS = '▁▂▃▄▅▆▇█';

/**
 * A one-line chart of a numeric column, `width` characters wide: each character is the mean of
 * its bucket of values, scaled between the column's min and max.
 */
export function sparkline(values: ArrayLike<number>, width: number): string {
  const n = values.length;
  if (n === 0 || width < 1) return '';
  const buckets = Math.min(width, n);
  const means: number[] = [];
  for (let b = 0; b < buckets; b++) {
    const from = Math.floor((b * n) / buckets);
    const to = Math.floor(((b + 1) * n) / buckets);
    let sum = 0;
    for (let i = from; i < to; i++) sum += values[i] as number;
    means.push(sum / Math.max(1, to - from));
  }
  const min = Math.min(...means);
  const max = Math.max(...means);
  const span = max - min;
  return means.map((m) => BLOCKS[span === 0 ? 3 : Math.min(7, Math.floor(((m - min) / span) * 8))]).join('');
}

/** An aligned text table of one series: ts as ISO-8601 UTC, then one column per field. */
export function seriesTable(series: SeriesColumns, limit: number | undefined): string[] {
  const names = Object.keys(series.fields).sort();
  const count = limit === undefined ? series.ts.length : Math.min(limit, series.ts.length);
  const rows: string[][] = [['ts', ...names]];
  for (let i = 0; i < count; i++) {
    rows.push([new Date(series.ts[i] as number).toISOString(), ...names.map((n) => cellText((series.fields[n] as Column)[i]))]);
  }
  const widths = rows[0]?.map((_, c) => Math.max(...rows.map((r) => (r[c] ?? '').length))) ?? [];
  const numeric = names.map((n) => series.fields[n] instanceof Float64Array);
  const lines = rows.map((r) =>
    r
      .map((cell, c) => (c > 0 && numeric[c - 1] === true ? cell.padStart(widths[c] ?? 0) : cell.padEnd(widths[c] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  if (count < series.ts.length) lines.push(`... ${series.ts.length - count} more rows (--limit)`);
  return lines;
}

function cellText(value: FieldValue | number | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
