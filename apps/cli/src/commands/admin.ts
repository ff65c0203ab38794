import { clientFrom, parse, parseTags, parseTime, seriesLabel, SELECTOR_OPTIONS } from '../args.js';
import { UsageError, writeOut, type Io } from '../io.js';
import { formatBytes } from '../progress.js';

export const FLUSH_HELP = `Usage: s4 flush

Moves everything in the hot tier into object storage now (the segment worker does it on its own
schedule) and prints what was written.
`;

export async function flushCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { json: { type: 'boolean' } });
  if (values.help === true) {
    io.stdout.write(FLUSH_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('flush takes no arguments');
  const r = await clientFrom(values, io).flush();
  io.stdout.write(values.json === true ? `${JSON.stringify(r)}\n` : `flushed ${r.samples} samples of ${r.series} series into ${r.objects} objects (${formatBytes(r.bytes)})\n`);
  return 0;
}

export const SERIES_HELP = `Usage: s4 series [options]

Lists the series matching a selector, one per line as metric{k=v,...}.

Options:
  -m, --metric <m>   metric (default: all)
  -t, --tag <k:v>    tag filter, repeatable
  --from, --to       only series with samples in [from, to)
  --json             one {"metric","tags"} object per line
`;

export async function seriesCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { ...SELECTOR_OPTIONS, json: { type: 'boolean' } });
  if (values.help === true) {
    io.stdout.write(SERIES_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('series takes no arguments');
  const series = await clientFrom(values, io).series({
    ...(values.metric === undefined ? {} : { metric: values.metric }),
    tags: parseTags(values.tag),
    ...(values.from === undefined ? {} : { from: parseTime(values.from, 'from') }),
    ...(values.to === undefined ? {} : { to: parseTime(values.to, 'to') }),
  });
  const lines = series.map((s) => (values.json === true ? JSON.stringify(s) : seriesLabel(s.metric, s.tags)));
  if (values.json !== true) lines.sort();
  for (const line of lines) await writeOut(io.stdout, `${line}\n`);
  return 0;
}
