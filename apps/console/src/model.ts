/** Pure helpers of the console (no DOM): tested in model.spec.ts. */
import type { FieldValue, Series, SeriesKey } from './api.js';

export function seriesLabel(s: SeriesKey): string {
  const tags = Object.keys(s.tags)
    .sort()
    .map((k) => `${k}=${s.tags[k]}`);
  return tags.length ? `${s.metric}{${tags.join(',')}}` : s.metric;
}

/**
 * A set of names to suggest from, sorted once. Suggestions: names starting with what was typed
 * (a binary search, then contiguous), then case-insensitive prefix matches, then names containing
 * it, each in sorted order, at most `limit`: a picker over 100 k names shows a page, never all,
 * and a keystroke costs a search plus at most one pass, without sorting.
 */
export class Names {
  private readonly sorted: string[];
  private readonly lower: string[];

  constructor(names: Iterable<string>) {
    this.sorted = [...new Set(names)].sort();
    this.lower = this.sorted.map((n) => n.toLowerCase());
  }

  get size(): number {
    return this.sorted.length;
  }

  suggest(typed: string, limit: number): string[] {
    const { sorted, lower } = this;
    const out: string[] = [];
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid]! < typed) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < sorted.length && out.length < limit && sorted[i]!.startsWith(typed); i++) out.push(sorted[i]!);
    if (out.length >= limit || !typed) return out;
    const q = typed.toLowerCase();
    const taken = new Set(out);
    for (const test of [(l: string) => l.startsWith(q), (l: string) => l.includes(q)]) {
      for (let i = 0; i < sorted.length && out.length < limit; i++) {
        if (!taken.has(sorted[i]!) && test(lower[i]!)) {
          out.push(sorted[i]!);
          taken.add(sorted[i]!);
        }
      }
    }
    return out;
  }
}

/** Every dotted path to a leaf of a record (objects are walked; arrays and scalars are leaves). */
export function fieldPaths(fields: Record<string, FieldValue>): string[] {
  const out: string[] = [];
  const walk = (v: FieldValue, path: string): void => {
    if (v !== null && typeof v === 'object' && !Array.isArray(v)) {
      const keys = Object.keys(v);
      if (keys.length === 0) out.push(path);
      for (const k of keys) walk(v[k]!, `${path}.${k}`);
    } else out.push(path);
  };
  for (const [k, v] of Object.entries(fields)) walk(v, k);
  return out.sort();
}

/** The value at a dotted path of a top-level field's value; undefined when absent. */
export function pickPath(fields: Record<string, FieldValue[]>, path: string, i: number): FieldValue | undefined {
  const [top, ...rest] = path.split('.');
  let v: FieldValue | undefined = fields[top!]?.[i];
  for (const k of rest) {
    if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v)) return undefined;
    v = Object.hasOwn(v, k) ? v[k] : undefined;
  }
  return v;
}

/** Sample i of a series as one record: `{ ts, fields }` with every top-level field that has a value. */
export function recordAt(s: Series, i: number): { metric: string; tags: Record<string, string>; ts: number; time: string; fields: Record<string, FieldValue> } {
  const fields: Record<string, FieldValue> = {};
  for (const [k, col] of Object.entries(s.fields)) if (col[i] !== null && col[i] !== undefined) fields[k] = col[i]!;
  return { metric: s.metric, tags: s.tags, ts: s.ts[i]!, time: new Date(s.ts[i]!).toISOString(), fields };
}

/** A plottable line: one series' numeric values of one field path, on its own timestamps. */
export interface Line {
  label: string;
  ts: number[];
  values: (number | null)[];
}

/** The numeric lines of an answer: every (series, path) with at least one number, the first `limit` of them. */
export function linesOf(series: readonly Series[], paths?: readonly string[], limit = Infinity): Line[] {
  const out: Line[] = [];
  for (const s of series) {
    if (out.length >= limit) break;
    const names = paths ?? Object.keys(s.fields).sort();
    for (const p of names) {
      const values = s.ts.map((_, i) => {
        const v = pickPath(s.fields, p, i);
        return typeof v === 'number' ? v : null;
      });
      if (values.some((v) => v !== null) && out.length < limit) out.push({ label: `${seriesLabel(s)} ${p}`, ts: s.ts, values });
    }
  }
  return out;
}

/** Lines on one shared, ascending time axis (what uPlot draws); gaps are null. */
export function align(lines: readonly Line[]): [number[], ...(number | null)[][]] {
  const all = new Set<number>();
  for (const l of lines) for (const t of l.ts) all.add(t);
  const xs = [...all].sort((a, b) => a - b);
  const at = new Map(xs.map((t, i) => [t, i]));
  const ys = lines.map((l) => {
    const col = new Array<number | null>(xs.length).fill(null);
    l.ts.forEach((t, i) => (col[at.get(t)!] = l.values[i]!));
    return col;
  });
  return [xs, ...ys];
}

/** Bucket widths the auto step chooses from (whole minutes and hours are answered from rollups). */
export const AUTO_STEPS: readonly { name: string; ms: number }[] = [
  ['1s', 1000], ['5s', 5000], ['10s', 10_000], ['30s', 30_000], ['1m', 60_000], ['5m', 300_000], ['10m', 600_000], ['30m', 1_800_000],
  ['1h', 3_600_000], ['6h', 21_600_000], ['1d', 86_400_000], ['7d', 604_800_000],
].map(([name, ms]) => ({ name: name as string, ms: ms as number }));

/** The finest step that gives at most one bucket per pixel column over the range. */
export function autoStep(rangeMs: number, pixels: number): string {
  const want = rangeMs / Math.max(1, pixels);
  return (AUTO_STEPS.find((s) => s.ms >= want) ?? AUTO_STEPS[AUTO_STEPS.length - 1]!).name;
}

export const PRESETS: readonly { name: string; ms: number }[] = [
  { name: '15m', ms: 15 * 60_000 },
  { name: '1h', ms: 3_600_000 },
  { name: '6h', ms: 6 * 3_600_000 },
  { name: '24h', ms: 86_400_000 },
  { name: '7d', ms: 7 * 86_400_000 },
  { name: '30d', ms: 30 * 86_400_000 },
];

/** `datetime-local` values are local wall-clock times; the API takes ms since the epoch. */
export function toLocalInput(ms: number): string {
  const d = new Date(ms - new Date(ms).getTimezoneOffset() * 60_000);
  return d.toISOString().slice(0, 16);
}

export function fromLocalInput(v: string): number | null {
  const ms = new Date(v).getTime();
  return Number.isFinite(ms) ? ms : null;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}

export function formatAge(ms: number): string {
  const s = Math.round(ms / 1000);
  if (Math.abs(s) < 120) return `${s} s`;
  const m = Math.round(s / 60);
  if (Math.abs(m) < 120) return `${m} min`;
  const hr = Math.round(m / 60);
  if (Math.abs(hr) < 48) return `${hr} h`;
  return `${Math.round(hr / 24)} d`;
}

/** Counters in Prometheus text that count failures: `*_errors_total`, `*_crashes_total`, `outcome="error"`. */
export function errorCounters(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^(\S+)\s+(\S+)$/.exec(line);
    if (!m) continue;
    const [, name, value] = m;
    if (/_(errors|crashes)_total(\{|$)/.test(name!) || /outcome="error"/.test(name!)) out.set(name!, Number(value));
  }
  return out;
}
