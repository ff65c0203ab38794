import { msgpack } from '@s4/format';
import type { FieldValue } from '@s4/core';
import { ExpectedStore } from './model.js';

export type SeriesAnswer = Map<string, { ts: number[]; fields: Record<string, FieldValue[]> }>;

export async function post(url: string, body: unknown, contentType = 'application/json'): Promise<Response> {
  const payload = contentType === 'application/json' ? JSON.stringify(body) : contentType === 'application/msgpack' ? msgpack.pack(body) : (body as string);
  return fetch(url, { method: 'POST', headers: { 'content-type': contentType }, body: payload });
}

export async function expectOk(r: Response): Promise<Response> {
  if (!r.ok) throw new Error(`${r.status} ${r.url}: ${await r.text()}`);
  return r;
}

/** Query and parse the answer of any format into columns per series key. */
export async function queryAll(base: string, params: Record<string, string | string[]>, format: 'json' | 'msgpack' | 'csv' | 'ndjson'): Promise<SeriesAnswer> {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) for (const x of Array.isArray(v) ? v : [v]) q.append(k, x);
  q.set('format', format);
  const r = await expectOk(await fetch(`${base}/v1/query?${q}`));
  const out: SeriesAnswer = new Map();
  const series = (metric: string, tags: Record<string, string>) => {
    const k = ExpectedStore.key(metric, tags);
    let s = out.get(k);
    if (!s) out.set(k, (s = { ts: [], fields: {} }));
    return s;
  };
  const appendColumns = (s: { ts: number[]; fields: Record<string, FieldValue[]> }, ts: ArrayLike<number>, fields: Record<string, ArrayLike<FieldValue>>) => {
    const before = s.ts.length;
    for (const [f, col] of Object.entries(fields)) {
      s.fields[f] ??= new Array<FieldValue>(before).fill(null);
      s.fields[f].push(...Array.from(col));
    }
    s.ts.push(...Array.from(ts));
    for (const col of Object.values(s.fields)) while (col.length < s.ts.length) col.push(null);
  };
  if (format === 'json') {
    const body = (await r.json()) as { series: { metric: string; tags: Record<string, string>; ts: number[]; fields: Record<string, FieldValue[]> }[] };
    for (const s of body.series) appendColumns(series(s.metric, s.tags), s.ts, s.fields);
  } else if (format === 'msgpack') {
    const chunks = msgpack.unpackMultiple(Buffer.from(await r.arrayBuffer())) as { metric: string; tags: Record<string, string>; ts: Float64Array; fields: Record<string, ArrayLike<FieldValue>> }[];
    for (const c of chunks) {
      if (!(c.ts instanceof Float64Array)) throw new Error('msgpack ts must be a Float64Array');
      appendColumns(series(c.metric, c.tags), c.ts, c.fields);
    }
  } else if (format === 'ndjson') {
    for (const line of (await r.text()).split('\n')) {
      if (!line) continue;
      const o = JSON.parse(line) as { metric: string; tags: Record<string, string>; ts: number; fields: Record<string, FieldValue> };
      appendColumns(series(o.metric, o.tags), [o.ts], Object.fromEntries(Object.entries(o.fields).map(([k, v]) => [k, [v]])));
    }
  } else {
    const [header, ...rows] = parseCsv(await r.text());
    const names = header!.slice(3);
    for (const row of rows) {
      const tags = Object.fromEntries(row[1] ? row[1].split(';').map((kv) => kv.split('=') as [string, string]) : []);
      const fields: Record<string, FieldValue[]> = {};
      names.forEach((f, i) => (fields[f] = [csvValue(row[3 + i]!)]));
      appendColumns(series(row[0]!, tags), [Number(row[2])], fields);
    }
  }
  // Columns that are null everywhere carry nothing; drop them as the JSON answer does.
  for (const s of out.values()) for (const [f, col] of Object.entries(s.fields)) if (col.every((v) => v === null)) delete s.fields[f];
  return out;
}

function csvValue(cell: string): FieldValue {
  if (cell === '') return null;
  if (cell === 'true' || cell === 'false') return cell === 'true';
  const n = Number(cell);
  return Number.isNaN(n) && cell !== 'NaN' ? cell : n;
}

export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(cell);
      cell = '';
    } else if (c === '\n') {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = '';
    } else cell += c;
  }
  if (cell || row.length) rows.push([...row, cell]);
  return rows;
}

/** Sort fields by name so answers compare equal regardless of column order. */
export function normalise(a: SeriesAnswer): Record<string, { ts: number[]; fields: Record<string, FieldValue[]> }> {
  const out: Record<string, { ts: number[]; fields: Record<string, FieldValue[]> }> = {};
  for (const k of [...a.keys()].sort()) {
    const s = a.get(k)!;
    out[k] = { ts: s.ts, fields: Object.fromEntries(Object.keys(s.fields).sort().map((f) => [f, s.fields[f]!])) };
  }
  return out;
}
