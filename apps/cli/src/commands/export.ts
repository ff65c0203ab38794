import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Writable } from 'node:stream';
import type { ExportFormat, S4Client, Tags } from '@s4/sdk';
import { clientFrom, parse, parseFields, parseTags, parseTime, SELECTOR_OPTIONS } from '../args.js';
import { exportParquet } from '../formats/parquet.js';
import { UsageError, writeOut, type Io } from '../io.js';

export const EXPORT_HELP = `Usage: s4 export [options]

Streams samples out of S4 without holding them in memory, in a format s4 import reads back.

Options:
  -m, --metric <m>     metric (default: every metric matching the tags)
  -t, --tag <k:v>      tag filter, repeatable
  --from <time>        inclusive (default 0); ms, ISO date, now, -1h, now-30m
  --to <time>          exclusive (default now+1d)
  --fields <a,b>       only these fields
  --format <f>         ndjson (default) | csv | msgpack | parquet (default from -o's extension)
  -o, --output <file>  write to a file instead of stdout (parquet: required)

Parquet: one row per sample, columns metric, tags (JSON), ts (timestamp ms) and fields (JSON,
nested records as written); DuckDB reads it directly: SELECT fields->'imu'->>'vibration' FROM 'x.parquet'.
`;

const EXPORT_FORMATS: readonly (ExportFormat | 'parquet')[] = ['ndjson', 'csv', 'msgpack', 'parquet'];

export async function exportCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SELECTOR_OPTIONS, format: { type: 'string' }, output: { type: 'string', short: 'o' } });
  if (values.help === true) {
    io.stdout.write(EXPORT_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`export takes no arguments, got ${positionals.join(' ')}`);
  const output = values.output;
  const format = (values.format ?? (output === undefined ? undefined : formatOf(output)) ?? 'ndjson') as ExportFormat | 'parquet';
  if (!EXPORT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${EXPORT_FORMATS.join(', ')}`);
  const tags = parseTags(values.tag);
  const from = values.from === undefined ? 0 : parseTime(values.from, 'from');
  const to = values.to === undefined ? Date.now() + 86_400_000 : parseTime(values.to, 'to');
  const fields = parseFields(values.fields);
  const client = clientFrom(values, io);
  const metrics = values.metric !== undefined ? [values.metric] : await metricsOf(client, tags, from, to);
  if (format === 'parquet') {
    if (output === undefined) throw new UsageError('--format parquet writes a file: give -o FILE');
    await exportParquet(client, output, metrics, { tags, from, to, ...(fields === undefined ? {} : { fields }) });
    return 0;
  }
  if (format === 'csv' && metrics.length > 1) throw new UsageError(`CSV holds one metric per file (its columns are that metric's fields); choose one of ${metrics.join(', ')} with --metric`);

  const out: Writable = output === undefined ? io.stdout : createWriteStream(output);
  try {
    for (const metric of metrics) {
      for await (const chunk of client.export({ metric, tags, from, to, format, ...(fields === undefined ? {} : { fields }) })) await writeOut(out, chunk);
    }
  } finally {
    if (out !== io.stdout) {
      out.end();
      await finished(out);
    }
  }
  return 0;
}

/** Every metric that has a series matching the tags, sorted. */
export async function metricsOf(client: S4Client, tags: Tags, from: number, to: number): Promise<string[]> {
  const series = await client.series({ tags, from, to });
  return [...new Set(series.map((s) => s.metric))].sort();
}

function formatOf(path: string): ExportFormat | 'parquet' | undefined {
  const name = path.toLowerCase();
  if (name.endsWith('.parquet')) return 'parquet';
  if (name.endsWith('.csv')) return 'csv';
  if (name.endsWith('.msgpack') || name.endsWith('.mpk')) return 'msgpack';
  if (name.endsWith('.ndjson') || name.endsWith('.jsonl')) return 'ndjson';
  return undefined;
}
