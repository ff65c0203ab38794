import { S4Error } from '@s4/sdk';
import { exportCommand, EXPORT_HELP } from './commands/export.js';
import { flushCommand, seriesCommand } from './commands/admin.js';
import { importCommand, IMPORT_HELP } from './commands/import.js';
import { queryCommand, QUERY_HELP } from './commands/query.js';
import { serveCommand } from './commands/serve.js';
import { verifyCommand, VERIFY_HELP } from './commands/verify.js';
import { issueDetail, processIo, UsageError, type Io } from './io.js';

export const VERSION = '0.1.0';

export const HELP = `s4 ${VERSION}: the S4 time-series store from the command line

Usage: s4 <command> [options]

Commands:
  serve            run S4 (embedded mode with no configuration)
  import <file>    load CSV, NDJSON, Influx line protocol or MessagePack (gzip ok), with progress
  export           stream samples out as NDJSON, CSV or MessagePack
  query            print samples as a table (sparkline for one series in a terminal)
  series           list the series matching a selector
  flush            move the hot tier into object storage now
  verify <a> <b>   compare two S4 URLs, or S4 and a file, per series and hour

Options for every command:
  --url <url>        S4 server (env S4_URL, default http://localhost:8080)
  --api-key <key>    sent as a bearer token (env S4_API_KEY)
  --namespace <ns>   sent as X-S4-Namespace (env S4_NAMESPACE)
  -h, --help         help for a command: s4 <command> --help

Exit codes: 0 success, 1 failure (or verify found differences), 2 usage error.
`;

type Command = (args: string[], io: Io) => Promise<number>;

const COMMANDS: Record<string, Command> = {
  serve: serveCommand,
  import: importCommand,
  export: exportCommand,
  query: queryCommand,
  series: seriesCommand,
  flush: flushCommand,
  verify: verifyCommand,
};

/** Options that take a value, so their value is not mistaken for the command name. */
const VALUE_OPTIONS = new Set(['--url', '--api-key', '--namespace']);

/** Runs the CLI; resolves to the exit code. Never throws: errors become one line on stderr. */
export async function main(argv: string[], io: Io = processIo()): Promise<number> {
  let at = 0;
  while (at < argv.length && (argv[at] as string).startsWith('-')) at += VALUE_OPTIONS.has(argv[at] as string) ? 2 : 1;
  const name = argv[at];
  const args = [...argv.slice(0, at), ...argv.slice(at + 1)];
  if (name === undefined) {
    if (argv.includes('--version') || argv.includes('-v')) {
      io.stdout.write(`${VERSION}\n`);
      return 0;
    }
    const help = argv.includes('--help') || argv.includes('-h');
    (help ? io.stdout : io.stderr).write(HELP);
    return help ? 0 : 2;
  }
  const command = name === 'help' ? undefined : COMMANDS[name];
  if (command === undefined) {
    if (name === 'help') {
      io.stdout.write(HELP);
      return 0;
    }
    io.stderr.write(`s4: unknown command ${JSON.stringify(name)}; run s4 --help\n`);
    return 2;
  }
  try {
    return await command(args, io);
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr.write(`s4 ${name}: ${oneLine(error.message)} (see s4 ${name} --help)\n`);
      return 2;
    }
    io.stderr.write(`s4 ${name}: ${oneLine(describe(error))}\n`);
    if (io.env.S4_DEBUG === '1' && error instanceof Error) io.stderr.write(`${error.stack ?? ''}\n`);
    return 1;
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const detail = error.message.includes(issueDetail(error)) ? '' : issueDetail(error);
  if (error instanceof S4Error || error.cause instanceof S4Error) return `${error.message}${detail}`;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}

export { HELP as help, EXPORT_HELP, IMPORT_HELP, QUERY_HELP, VERIFY_HELP };
