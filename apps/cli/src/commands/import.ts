import { stat } from 'node:fs/promises';
import { S4HttpError } from '@s4/sdk';
import { clientFrom, parse, positiveInt } from '../args.js';
import { InputError } from '../formats/errors.js';
import type { Precision } from '@s4/format';
import { INPUT_FORMATS, readSamples, type InputFormat } from '../formats/samples.js';
import { issueDetail, UsageError, type Io } from '../io.js';
import { Progress } from '../progress.js';

export const IMPORT_HELP = `Usage: s4 import <file|-> [options]

Loads samples into S4 through the SDK's batching writer (batches sent concurrently, retried with
backoff; writes are idempotent, so re-running an interrupted import is safe and resumes it).

Formats (from --format, else the file name, else the first line):
  csv      header metric,tags,ts,<field...>; tags as k1=v1;k2=v2  (what s4 export writes)
  ndjson   one {"metric","tags","ts","fields"} object per line   (what s4 export writes)
  line     InfluxDB line protocol; measurement = metric, --precision for timestamps
  msgpack  concatenated series chunks                            (what s4 export writes)
gzip is detected from the data itself.

Options:
  --format <f>        csv | ndjson | line | msgpack
  --precision <p>     line protocol timestamps: ns (default) | us | ms | s
  --batch <n>         samples per request (default 5000)
  --concurrency <n>   requests in flight (default 4)
  -q, --quiet         no progress or summary
`;

export async function importCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, {
    format: { type: 'string' },
    precision: { type: 'string' },
    batch: { type: 'string' },
    concurrency: { type: 'string' },
    quiet: { type: 'boolean', short: 'q' },
  });
  if (values.help === true) {
    io.stdout.write(IMPORT_HELP);
    return 0;
  }
  const [path, extra] = positionals;
  if (path === undefined || extra !== undefined) throw new UsageError('import takes one file (or - for stdin)');
  const format = values.format as InputFormat | undefined;
  if (format !== undefined && !INPUT_FORMATS.includes(format)) throw new UsageError(`--format must be one of ${INPUT_FORMATS.join(', ')}`);
  const precision = (values.precision ?? 'ns') as Precision;
  if (!['ns', 'us', 'ms', 's'].includes(precision)) throw new UsageError('--precision must be ns, us, ms or s');
  const maxBatch = positiveInt(values.batch, 'batch', 5000);
  const concurrency = positiveInt(values.concurrency, 'concurrency', 4);
  const quiet = values.quiet === true;

  const client = clientFrom(values, io, undefined, true);
  const total = path === '-' ? undefined : await stat(path).then((s) => s.size, () => {
    throw new UsageError(`cannot read ${path}: no such file`);
  });
  const progress = new Progress(io, total, quiet);
  const writer = client.writer({
    maxBatch,
    concurrency,
    onRetry: (e) => progress.note(`retrying: ${e.error instanceof S4HttpError ? e.error.status : e.error.name}`),
  });
  try {
    const samples = readSamples(path, { format, precision, stdin: io.stdin, onBytes: (n) => (progress.bytes += n) });
    for await (const sample of samples) {
      await writer.write(sample);
      progress.rows++;
      progress.tick();
    }
    await writer.close();
  } catch (error) {
    await writer.close().catch(() => undefined);
    const acknowledged = writer.stats().acknowledged;
    progress.done('stopped after', quiet);
    const where = error instanceof InputError ? `${path}:${error.line}: ` : '';
    const hint = `${acknowledged} samples stored; fix the cause and re-run (writes are idempotent)`;
    throw new Error(`${where}${(error as Error).message}${issueDetail(error)} — ${hint}`, { cause: error });
  }
  progress.done('imported', quiet);
  return 0;
}
