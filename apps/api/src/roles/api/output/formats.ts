import { nameMap, own, sortedTags, type FieldValue } from '@s4/core';
import type { ColumnSlice, SeriesResult } from '@s4/engine';
import { assemble, columnWriter, JsonBytes, msgpack, sliceColumns, type BlockColumns } from '@s4/format';
import { nodeWire } from './columns-wire.js';
import { PieceWriter } from './msgpack-pieces.js';

export const FORMATS = ['json', 'msgpack', 'csv', 'ndjson'] as const;
export type Format = (typeof FORMATS)[number];

export const CONTENT_TYPES: Record<Format, string> = {
  json: 'application/json; charset=utf-8',
  msgpack: 'application/msgpack',
  csv: 'text/csv; charset=utf-8',
  ndjson: 'application/x-ndjson; charset=utf-8',
};

/** Points per msgpack chunk: a long series arrives as several chunks, so no frame is huge. */
const MSGPACK_CHUNK = 65_536;
/** Output is gathered into pieces of about this size before it is handed to the socket. */
const PIECE = 256 * 1024;

/** Something that may be missing from an answer (JSON carries it in `warnings`; every format in headers). */
export interface AnswerWarning {
  readonly code: 'ingest_lag';
  readonly message: string;
  readonly shards: readonly number[];
}

/**
 * Encode query results as a stream of byte/string pieces in the given format. `compactColumns`:
 * the client reads compact node columns (columns-wire.ts; MessagePack only).
 */
export function encode(format: Format, results: AsyncIterable<SeriesResult>, fields?: readonly string[], warnings: readonly AnswerWarning[] = [], compactColumns = false): AsyncGenerator<string | Buffer> {
  switch (format) {
    case 'json':
      return json(results, warnings);
    case 'ndjson':
      return ndjson(results);
    case 'csv':
      return csv(results, fields);
    case 'msgpack':
      return msgpackChunks(results, compactColumns);
  }
}

async function* json(results: AsyncIterable<SeriesResult>, warnings: readonly AnswerWarning[]): AsyncGenerator<Buffer> {
  const out = new JsonBytes(PIECE);
  out.ascii('{"series":[');
  let first = true;
  for await (const s of results) {
    if (!first) out.byte(COMMA);
    if (s.slices) yield* columnarJson(out, s, s.slices, s.names ?? []);
    else out.text(JSON.stringify({ metric: s.metric, tags: s.tags, ts: s.ts, fields: s.fields }));
    first = false;
    if (out.ready) yield* buffers(out.take());
  }
  out.text(warnings.length > 0 ? `],"warnings":${JSON.stringify(warnings)}}` : ']}');
  yield* buffers(out.end());
}

/**
 * A columnar series as JSON, written from the block columns without building a record: the
 * same text as JSON.stringify of its values (the property test holds it to that).
 */
function* columnarJson(out: JsonBytes, s: SeriesResult, slices: readonly ColumnSlice[], names: readonly string[]): Generator<Buffer> {
  const parts: BlockColumns[] = slices.map((x) => sliceColumns(x.columns, x.lo, x.hi));
  out.text(`{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(s.tags)},"ts":[`);
  let i = 0;
  for (const p of parts)
    for (const t of p.ts) {
      if (i++ > 0) out.byte(COMMA);
      out.number(t);
    }
  out.ascii('],"fields":{');
  for (const [f, name] of names.entries()) {
    out.text(`${f === 0 ? '' : ','}${JSON.stringify(name)}:[`);
    i = 0;
    for (const p of parts) {
      const next = p.fields.has(name) ? columnWriter(p, name) : null;
      for (let k = 0; k < p.ts.length; k++, i++) {
        if (!next?.(out, i === 0 ? NOTHING : COMMA_BYTES)) out.ascii(i === 0 ? 'null' : ',null');
        if (out.ready) yield* buffers(out.take());
      }
    }
    out.byte(0x5d);
  }
  out.ascii('}}');
}

/** One sample per line, exactly the NDJSON write format, so an export can be imported again. */
async function* ndjson(results: AsyncIterable<SeriesResult>): AsyncGenerator<string | Buffer> {
  const out = new JsonBytes(PIECE);
  for await (const s of results) {
    if (s.slices) {
      yield* columnarNdjson(out, s, s.slices, s.names ?? []);
      continue;
    }
    yield* buffers(out.end());
    const head = `{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(Object.fromEntries(sortedTags(s.tags)))},"ts":`;
    const names = Object.keys(s.fields);
    const keys = names.map((f) => JSON.stringify(f));
    let piece = '';
    for (let i = 0; i < s.ts.length; i++) {
      let line = `${head}${s.ts[i]},"fields":{`;
      let sep = '';
      for (let f = 0; f < names.length; f++) {
        const v = s.fields[names[f]!]![i];
        if (v === null || v === undefined) continue;
        line += `${sep}${keys[f]}:${jsonValue(v)}`;
        sep = ',';
      }
      piece += `${line}}}\n`;
      if (piece.length >= PIECE) {
        yield piece;
        piece = '';
      }
    }
    if (piece) yield piece;
  }
  yield* buffers(out.end());
}

/**
 * NDJSON lines of a columnar series, written as bytes from the columns as the JSON answer is
 * (null values left out): the same text as the string-built lines of a non-columnar series.
 */
function* columnarNdjson(out: JsonBytes, s: SeriesResult, slices: readonly ColumnSlice[], names: readonly string[]): Generator<Buffer> {
  const head = utf8.encode(`{"metric":${JSON.stringify(s.metric)},"tags":${JSON.stringify(Object.fromEntries(sortedTags(s.tags)))},"ts":`);
  // Each field's `"name":` and `,"name":`: the first field written on a line has no comma.
  const firstKeys = names.map((f) => utf8.encode(`${JSON.stringify(f)}:`));
  const nextKeys = names.map((f) => utf8.encode(`,${JSON.stringify(f)}:`));
  for (const x of slices) {
    const p = sliceColumns(x.columns, x.lo, x.hi);
    const writers = names.map((name) => (p.fields.has(name) ? columnWriter(p, name) : null));
    for (let i = 0; i < p.ts.length; i++) {
      out.bytes(head);
      out.number(p.ts[i]!);
      out.bytes(FIELDS_OPEN);
      let first = true;
      for (let f = 0; f < writers.length; f++) {
        const next = writers[f];
        if (next?.(out, first ? firstKeys[f]! : nextKeys[f]!)) first = false;
      }
      out.bytes(LINE_END);
      if (out.ready) yield* buffers(out.take());
    }
  }
}

const utf8 = new TextEncoder();
const FIELDS_OPEN = utf8.encode(',"fields":{');
const LINE_END = utf8.encode('}}\n');
const COMMA = 0x2c;
const COMMA_BYTES = Uint8Array.of(COMMA);
const NOTHING = new Uint8Array(0);

/** Written pieces as Buffers (views, no copy) for the socket. */
function* buffers(pieces: readonly Uint8Array[]): Generator<Buffer> {
  for (const p of pieces) yield Buffer.from(p.buffer, p.byteOffset, p.length);
}

function jsonValue(v: FieldValue): string {
  return typeof v === 'number' && !Number.isFinite(v) ? 'null' : JSON.stringify(v);
}

/**
 * CSV: `metric,tags,ts,<fields>`. The field columns are the requested fields or, without them,
 * the union over all results, which means the whole result is gathered before the first row.
 */
async function* csv(results: AsyncIterable<SeriesResult>, fields?: readonly string[]): AsyncGenerator<string> {
  let columns = fields;
  let buffered: SeriesResult[] | null = null;
  if (!columns) {
    buffered = [];
    const names = new Set<string>();
    for await (const s of results) {
      buffered.push(s);
      for (const f of Object.keys(s.fields)) names.add(f);
    }
    columns = [...names].sort();
  }
  yield `${['metric', 'tags', 'ts', ...columns].map(csvCell).join(',')}\n`;
  const source: AsyncIterable<SeriesResult> | SeriesResult[] = buffered ?? results;
  for await (const s of source) {
    const head = `${csvCell(s.metric)},${csvCell(sortedTags(s.tags).map(([k, v]) => `${k}=${v}`).join(';'))},`;
    const cols = columns.map((f) => own(s.fields, f));
    let piece = '';
    for (let i = 0; i < s.ts.length; i++) {
      let row = `${head}${s.ts[i]}`;
      for (const col of cols) row += `,${csvValue(col?.[i])}`;
      piece += `${row}\n`;
      if (piece.length >= PIECE) {
        yield piece;
        piece = '';
      }
    }
    if (piece) yield piece;
  }
}

function csvValue(v: FieldValue | undefined): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'number') return Number.isNaN(v) ? 'NaN' : String(v);
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  return csvCell(typeof v === 'string' ? v : JSON.stringify(v));
}

function csvCell(s: string): string {
  return /[",\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s;
}

/**
 * A concatenation of MessagePack maps, one per series chunk, numeric columns as Float64Array.
 * A series answered from block columns goes as one chunk per block run: its flat fields in
 * `fields` as before, its shredded (nested) fields in `shredded` as node columns (columns-wire.ts),
 * which the SDK turns into records only when asked, and then `names`, every field in answer order.
 */
async function* msgpackChunks(results: AsyncIterable<SeriesResult>, compact: boolean): AsyncGenerator<Buffer> {
  const out = new PieceWriter();
  for await (const s of results) {
    if (s.slices) {
      for (const x of s.slices) {
        const p = sliceColumns(x.columns, x.lo, x.hi);
        // A whole block's nodes are the cached block's own, so memos keyed by them last (nodeWire).
        const own = p === x.columns;
        const fields = nameMap<Float64Array | FieldValue[]>();
        const shredded: unknown[] = [];
        for (const name of s.names ?? []) {
          const f = p.fields.get(name);
          if (f?.kind === 'shredded') shredded.push(name, nodeWire(f.root, p.selection?.get(name), compact, x.columns, own));
          else {
            const col = f ? (p.selection?.get(name)?.all === false ? columnsValues(p, name) : (f.values as FieldValue[])) : new Array<FieldValue>(p.ts.length).fill(null);
            fields[name] = numericColumn(col, 0, col.length) ?? col;
          }
        }
        // Node columns' typed arrays go out as views of the block's (PieceWriter), not copied into one buffer.
        out.value({ metric: s.metric, tags: s.tags, ts: Float64Array.from(p.ts), fields, ...(shredded.length > 0 ? { shredded, names: s.names } : {}) });
        yield* out.take();
      }
      continue;
    }
    for (let lo = 0; lo < s.ts.length || lo === 0; lo += MSGPACK_CHUNK) {
      const hi = Math.min(s.ts.length, lo + MSGPACK_CHUNK);
      const fields = nameMap<Float64Array | FieldValue[]>();
      for (const [f, col] of Object.entries(s.fields)) fields[f] = numericColumn(col, lo, hi) ?? col.slice(lo, hi);
      const ts = new Float64Array(hi - lo);
      for (let i = lo; i < hi; i++) ts[i - lo] = s.ts[i]!;
      yield msgpack.pack({ metric: s.metric, tags: s.tags, ts, fields });
      if (hi >= s.ts.length) break;
    }
  }
}

function numericColumn(col: readonly FieldValue[], lo: number, hi: number): Float64Array | null {
  const out = new Float64Array(hi - lo);
  for (let i = lo; i < hi; i++) {
    const v = col[i];
    if (typeof v !== 'number') return null;
    out[i - lo] = v;
  }
  return out;
}

/** A flat (unshredded) field seen through a projection: its values projected, as assemble would. */
function columnsValues(p: BlockColumns, name: string): FieldValue[] {
  return assemble({ ts: p.ts, fields: new Map([[name, p.fields.get(name)!]]), selection: p.selection }).fields[name]!;
}
