import type { FieldValue, S4Client, Sample, Tags } from '@s4/sdk';
import { clientFrom, parse, parseTags, parseTime, seriesLabel, SELECTOR_OPTIONS } from '../args.js';
import { readSamples } from '../formats/samples.js';
import { UsageError, writeOut, type Io } from '../io.js';
import { metricsOf } from './export.js';

export const VERIFY_HELP = `Usage: s4 verify <a> <b> [options]

Checks that two sources hold the same samples. A source is an S4 URL (http://...) or a file
(CSV, NDJSON, line protocol, MessagePack; gzip detected). Per series and time window it compares
the count, the first and last timestamp and a checksum of the samples' content, and prints every
window that differs. Exit code 0 when they agree, 1 when they differ.

Options:
  -m, --metric <m>    only this metric (default: all)
  -t, --tag <k:v>     tag filter, repeatable
  --from <time>       inclusive (default 0)
  --to <time>         exclusive (default now+1d)
  --window <dur>      window length: 1h (default), 1d, 15m, ...
  --precision <p>     line protocol timestamps in a file source: ns (default) | us | ms | s
  --max-report <n>    print at most n differing windows (default 100)
`;

/** What a source holds in one window of one series. */
export interface WindowSummary {
  count: number;
  minTs: number;
  maxTs: number;
  /** Order-independent: the sum of per-sample hashes, two 32-bit lanes. */
  sumA: number;
  sumB: number;
}

type Windows = Map<string, WindowSummary>;

interface Selector {
  metric: string | undefined;
  tags: Tags;
  from: number;
  to: number;
  windowMs: number;
}

export async function verifyCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SELECTOR_OPTIONS, window: { type: 'string' }, precision: { type: 'string' }, 'max-report': { type: 'string' } });
  if (values.help === true) {
    io.stdout.write(VERIFY_HELP);
    return 0;
  }
  const [a, b, extra] = positionals;
  if (a === undefined || b === undefined || extra !== undefined) throw new UsageError('verify takes two sources: URLs or files');
  const windowMs = values.window === undefined ? 3_600_000 : parseDuration(values.window);
  const maxReport = values['max-report'] === undefined ? 100 : Number(values['max-report']);
  const precision = (values.precision ?? 'ns') as 'ns';
  const selector: Selector = {
    metric: values.metric,
    tags: parseTags(values.tag),
    from: values.from === undefined ? 0 : parseTime(values.from, 'from'),
    to: values.to === undefined ? Date.now() + 86_400_000 : parseTime(values.to, 'to'),
    windowMs,
  };
  const summarize = (source: string): Promise<Windows> =>
    /^https?:\/\//.test(source) ? fromS4(clientFrom(values, io, source), selector) : fromFile(source, selector, io, precision);
  const [wa, wb] = await Promise.all([summarize(a), summarize(b)]);

  const keys = [...new Set([...wa.keys(), ...wb.keys()])].sort(byWindow);
  let differing = 0;
  for (const key of keys) {
    const x = wa.get(key);
    const y = wb.get(key);
    if (x !== undefined && y !== undefined && same(x, y)) continue;
    differing++;
    if (differing <= maxReport) {
      const [series, start] = key.split('\t') as [string, string];
      await writeOut(io.stdout, `${series}  ${new Date(Number(start)).toISOString()}  a: ${describe(x)}  b: ${describe(y)}\n`);
    }
  }
  if (differing > maxReport) await writeOut(io.stdout, `... and ${differing - maxReport} more\n`);
  const total = [wa, wb].map((w) => [...w.values()].reduce((n, s) => n + s.count, 0));
  const verdict = differing === 0 ? 'identical' : `${differing} of ${keys.length} windows differ`;
  io.stderr.write(`${verdict}: ${keys.length} windows compared, ${total[0]} samples in a, ${total[1]} in b\n`);
  return differing === 0 ? 0 : 1;
}

/** By series label, then window start in time order. */
function byWindow(x: string, y: string): number {
  const [sx = '', tx = '0'] = x.split('\t');
  const [sy = '', ty = '0'] = y.split('\t');
  return sx < sy ? -1 : sx > sy ? 1 : Number(tx) - Number(ty);
}

function same(x: WindowSummary, y: WindowSummary): boolean {
  return x.count === y.count && x.minTs === y.minTs && x.maxTs === y.maxTs && x.sumA === y.sumA && x.sumB === y.sumB;
}

function describe(w: WindowSummary | undefined): string {
  if (w === undefined) return 'missing';
  const t = (ms: number): string => new Date(ms).toISOString().slice(11, 23);
  return `${w.count} samples ${t(w.minTs)}..${t(w.maxTs)} #${hex(w.sumA)}${hex(w.sumB)}`;
}

function hex(n: number): string {
  return n.toString(16).padStart(8, '0');
}

/** Streams every matching series from S4 (typed arrays over MessagePack) into window summaries. */
async function fromS4(client: S4Client, sel: Selector): Promise<Windows> {
  const windows: Windows = new Map();
  const metrics = sel.metric !== undefined ? [sel.metric] : await metricsOf(client, sel.tags, sel.from, sel.to);
  for (const metric of metrics) {
    for await (const chunk of client.stream({ metric, tags: sel.tags, from: sel.from, to: sel.to })) {
      const label = seriesLabel(chunk.metric, chunk.tags);
      const names = Object.keys(chunk.fields);
      for (let i = 0; i < chunk.ts.length; i++) {
        const fields: Record<string, FieldValue> = {};
        for (const n of names) fields[n] = (chunk.fields[n] as ArrayLike<FieldValue>)[i] as FieldValue;
        add(windows, label, chunk.ts[i] as number, sampleHash(chunk.ts[i] as number, fields), sel.windowMs);
      }
    }
  }
  return windows;
}

/**
 * Reads a file into window summaries. A file may repeat a (series, ts) — the store keeps the last
 * write — so samples are first de-duplicated, which holds one hash per sample in memory.
 */
async function fromFile(path: string, sel: Selector, io: Io, precision: 'ns'): Promise<Windows> {
  const latest = new Map<string, Map<number, [number, number]>>();
  for await (const s of readSamples(path, { precision, stdin: io.stdin, onBytes: () => undefined })) {
    if (!matches(s, sel)) continue;
    const label = seriesLabel(s.metric, s.tags ?? {});
    let series = latest.get(label);
    if (series === undefined) latest.set(label, (series = new Map()));
    series.set(s.ts, sampleHash(s.ts, s.fields));
  }
  const windows: Windows = new Map();
  for (const [label, samples] of latest) for (const [ts, h] of samples) add(windows, label, ts, h, sel.windowMs);
  return windows;
}

function matches(s: Sample, sel: Selector): boolean {
  if (sel.metric !== undefined && s.metric !== sel.metric) return false;
  if (s.ts < sel.from || s.ts >= sel.to) return false;
  for (const [k, v] of Object.entries(sel.tags)) if (s.tags?.[k] !== v) return false;
  return true;
}

function add(windows: Windows, label: string, ts: number, [ha, hb]: [number, number], windowMs: number): void {
  const start = Math.floor(ts / windowMs) * windowMs;
  const key = `${label}\t${start}`;
  const w = windows.get(key);
  if (w === undefined) windows.set(key, { count: 1, minTs: ts, maxTs: ts, sumA: ha, sumB: hb });
  else {
    w.count++;
    if (ts < w.minTs) w.minTs = ts;
    if (ts > w.maxTs) w.maxTs = ts;
    w.sumA = (w.sumA + ha) >>> 0;
    w.sumB = (w.sumB + hb) >>> 0;
  }
}

/**
 * Hash of a sample's content: its timestamp and its present fields (null = absent) in key order,
 * nested values with sorted keys, so every source that holds the same sample hashes it the same.
 */
export function sampleHash(ts: number, fields: Record<string, FieldValue | undefined>): [number, number] {
  let text = String(ts);
  for (const k of Object.keys(fields).sort()) {
    const v = fields[k];
    if (v === null || v === undefined) continue;
    text += `\u0000${k}\u0001${canonical(v)}`;
  }
  return hash64(text);
}

function canonical(v: FieldValue): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(v[k] as FieldValue)}`)
    .join(',')}}`;
}

/** cyrb53-style string hash, both 32-bit lanes. Not cryptographic: it detects accidents, not attacks. */
function hash64(text: string): [number, number] {
  let h1 = 0xdeadbeef;
  let h2 = 0x41c6ce57;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 2654435761);
    h2 = Math.imul(h2 ^ c, 1597334677);
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909);
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909);
  return [h1 >>> 0, h2 >>> 0];
}

function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text.trim());
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };
  const ms = m === null ? Number.NaN : Number(m[1]) * (unit[m[2] as string] as number);
  if (!(ms > 0)) throw new UsageError(`--window must look like 1h, 15m or 1d, got ${text}`);
  return ms;
}
