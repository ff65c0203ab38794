import type { Readable } from 'node:stream';
import type { Precision } from '@s4/format';
import { MsgpackStreamDecoder, type FieldValue, type Sample, type SeriesColumns } from '@s4/sdk';
import { csvRecords, csvSamples } from './csv.js';
import { InputError } from './errors.js';
import { lines, readInput } from './input.js';
import { parseNdjsonLine } from './ndjson.js';

export type InputFormat = 'csv' | 'ndjson' | 'line' | 'msgpack';
export const INPUT_FORMATS: readonly InputFormat[] = ['csv', 'ndjson', 'line', 'msgpack'];

export interface ReadOptions {
  format?: InputFormat | undefined;
  precision: Precision;
  stdin: Readable;
  onBytes: (n: number) => void;
  now?: number;
}

/** The format a file name says, ignoring a trailing `.gz`; undefined when it says nothing. */
export function formatFromName(path: string): InputFormat | undefined {
  const name = path.toLowerCase().replace(/\.gz$/, '');
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl') || name.endsWith('.json')) return 'ndjson';
  if (name.endsWith('.lp') || name.endsWith('.line') || name.endsWith('.influx')) return 'line';
  if (name.endsWith('.msgpack') || name.endsWith('.mpk')) return 'msgpack';
  return undefined;
}

/**
 * Samples from a file in any import format (gzip or not). The format comes from the option,
 * else the file name, else the first line: `{` = NDJSON, `metric,tags,ts` = CSV, else line protocol.
 */
export async function* readSamples(path: string, options: ReadOptions): AsyncGenerator<Sample> {
  const bytes = readInput(path, options.stdin, options.onBytes);
  const format = options.format ?? formatFromName(path);
  if (format === 'msgpack') {
    yield* msgpackSamples(bytes);
    return;
  }
  const text = lines(bytes);
  const first = await text.next();
  if (first.done === true) return;
  const detected = format ?? sniff(first.value);
  async function* all(): AsyncGenerator<string> {
    yield first.value as string;
    yield* text;
  }
  if (detected === 'csv') {
    let parse: ((record: string[], line: number) => Sample) | undefined;
    for await (const { record, line } of csvRecords(all())) {
      if (parse === undefined) parse = csvSamples(record, line);
      else yield parse(record, line);
    }
    return;
  }
  let line = 0;
  const now = options.now ?? Date.now();
  // Loaded only for line protocol: @s4/format runs compiled (npm run build), while the rest of
  // the CLI also runs from its TypeScript sources.
  const { parseLineProtocol } = detected === 'line' ? await import('@s4/format') : { parseLineProtocol: undefined };
  for await (const t of all()) {
    line++;
    if (detected === 'ndjson') {
      const sample = parseNdjsonLine(t, line);
      if (sample !== null) yield sample;
      continue;
    }
    // The one line-protocol parser, shared with the server's /write endpoints.
    const parsed = parseLineProtocol!(t, { precision: options.precision, now, firstLine: line, maxIssues: 1 });
    const issue = parsed.issues[0];
    if (issue) throw new InputError(line, `line protocol, column ${issue.column}: ${issue.message}`);
    yield* parsed.samples;
  }
}

function sniff(firstLine: string): InputFormat {
  const t = firstLine.replace(/^\uFEFF/, '').trimStart();
  if (t.startsWith('{')) return 'ndjson';
  if (/^"?metric"?,"?tags"?,"?ts"?(,|$)/.test(t)) return 'csv';
  return 'line';
}

/** Concatenated MessagePack series chunks (the layout of `s4 export --format msgpack`) → samples. */
async function* msgpackSamples(bytes: AsyncIterable<Uint8Array>): AsyncGenerator<Sample> {
  const decoder = new MsgpackStreamDecoder();
  let chunkNo = 0;
  for await (const b of bytes) for (const value of decoder.push(b)) yield* chunkSamples(value, ++chunkNo);
  for (const value of decoder.end()) yield* chunkSamples(value, ++chunkNo);
}

function* chunkSamples(value: unknown, chunkNo: number): Generator<Sample> {
  const c = value as Partial<SeriesColumns> | null;
  if (c === null || typeof c !== 'object' || typeof c.metric !== 'string' || c.ts === undefined) throw new InputError(chunkNo, 'MessagePack value is not a series chunk {metric,tags,ts,fields}');
  const names = Object.keys(c.fields ?? {});
  const columns = names.map((n) => (c.fields as Record<string, ArrayLike<FieldValue>>)[n] as ArrayLike<FieldValue>);
  for (let i = 0; i < c.ts.length; i++) {
    const fields: Record<string, FieldValue> = {};
    for (let k = 0; k < names.length; k++) {
      const v = (columns[k] as ArrayLike<FieldValue>)[i];
      if (v !== null && v !== undefined) fields[names[k] as string] = v;
    }
    yield { metric: c.metric, tags: c.tags ?? {}, ts: c.ts[i] as number, fields };
  }
}
