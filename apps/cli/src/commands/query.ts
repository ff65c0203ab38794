import { clientFrom, parse, parseFields, parseTags, parseTime, positiveInt, seriesLabel, SELECTOR_OPTIONS } from '../args.js';
import { UsageError, writeOut, type Io } from '../io.js';
import { seriesTable, sparkline } from '../table.js';

export const QUERY_HELP = `Usage: s4 query -m <metric> [options]

Prints the samples of each matching series as a table (ts in UTC), with a sparkline when the
result is one numeric series and stdout is a terminal.

Options:
  -m, --metric <m>   metric (required)
  -t, --tag <k:v>    tag filter, repeatable
  --from <time>      inclusive (default -1h); ms, ISO date, now, -1h, now-30m
  --to <time>        exclusive (default now)
  --fields <a,b>     only these fields
  --limit <n>        at most n rows per series
  --json             one JSON object per series instead of a table
`;

export async function queryCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SELECTOR_OPTIONS, limit: { type: 'string' }, json: { type: 'boolean' } });
  if (values.help === true) {
    io.stdout.write(QUERY_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError(`query takes no arguments, got ${positionals.join(' ')}`);
  if (values.metric === undefined) throw new UsageError('query needs --metric');
  const now = Date.now();
  const from = values.from === undefined ? now - 3_600_000 : parseTime(values.from, 'from', now);
  const to = values.to === undefined ? now : parseTime(values.to, 'to', now);
  const limit = values.limit === undefined ? undefined : positiveInt(values.limit, 'limit', 1);
  const fields = parseFields(values.fields);
  const client = clientFrom(values, io);
  const result = await client.query({ metric: values.metric, tags: parseTags(values.tag), from, to, ...(fields === undefined ? {} : { fields }) });

  if (values.json === true) {
    for (const s of result.series) {
      const columns = Object.fromEntries(Object.entries(s.fields).map(([k, v]) => [k, Array.from(v as ArrayLike<unknown>)]));
      await writeOut(io.stdout, `${JSON.stringify({ metric: s.metric, tags: s.tags, ts: Array.from(s.ts), fields: columns })}\n`);
    }
    return 0;
  }
  if (result.series.length === 0) {
    io.stderr.write(`no samples of ${values.metric} in [${new Date(from).toISOString()}, ${new Date(to).toISOString()})\n`);
    return 0;
  }
  const single = result.series.length === 1 ? result.series[0] : undefined;
  const numeric = single === undefined ? [] : Object.entries(single.fields).filter(([, c]) => c instanceof Float64Array);
  for (const s of result.series) {
    await writeOut(io.stdout, `${seriesLabel(s.metric, s.tags)}  (${s.ts.length} samples)\n`);
    if (s === single && io.stdout.isTTY === true && numeric.length === 1 && s.ts.length > 1) {
      const [name, column] = numeric[0] as [string, Float64Array];
      const width = Math.max(10, (io.stdout.columns ?? 80) - name.length - 30);
      let min = Infinity;
      let max = -Infinity;
      for (const v of column) {
        min = Math.min(min, v);
        max = Math.max(max, v);
      }
      await writeOut(io.stdout, `${name} ${sparkline(column, width)}  min ${min} max ${max}\n`);
    }
    for (const line of seriesTable(s, limit)) await writeOut(io.stdout, `${line}\n`);
    await writeOut(io.stdout, '\n');
  }
  return 0;
}
