import { resolve } from 'node:path';
import { parse, positiveInt } from '../args.js';
import { UsageError, type Io } from '../io.js';

export const SERVE_HELP = `Usage: s4 serve [options]

Runs S4. With no configuration: embedded mode, one process with the API and all workers, data in
./data (hot tier log + filesystem object store). Every S4_* environment variable applies
(see the configuration docs), e.g. S4_REDIS_URL and S4_S3_BUCKET for the production path.

Options:
  --port <n>         S4_PORT (default 8080; 0 = any free port)
  --data-dir <dir>   S4_DATA_DIR (default ./data)
`;

interface Server {
  url: string;
  close(): Promise<void>;
}

export async function serveCommand(args: string[], io: Io): Promise<number> {
  const { values, positionals } = parse(args, { port: { type: 'string' }, 'data-dir': { type: 'string' } });
  if (values.help === true) {
    io.stdout.write(SERVE_HELP);
    return 0;
  }
  if (positionals.length > 0) throw new UsageError('serve takes no arguments');
  const env = { ...io.env };
  if (values.port !== undefined) env.S4_PORT = values.port === '0' ? '0' : String(positiveInt(values.port, 'port', 8080));
  if (values['data-dir'] !== undefined) env.S4_DATA_DIR = resolve(values['data-dir']);
  // Imported on demand: the SDK and the other commands never load the server.
  const specifier = '@s4/api';
  let api: { startServer?: (env: Record<string, string | undefined>) => Promise<Server> };
  try {
    api = (await import(specifier)) as typeof api;
  } catch (error) {
    throw new Error(`cannot load the server (@s4/api): ${(error as Error).message}; in a clone, run \`npm run build\` first`, { cause: error });
  }
  if (typeof api.startServer !== 'function') throw new Error('@s4/api does not export startServer: rebuild it (`npm run build`)');
  const server = await api.startServer(env);
  io.stderr.write(`s4 listening on ${server.url} (data in ${env.S4_DATA_DIR ?? './data'}); Ctrl-C stops\n`);
  await io.interrupted();
  io.stderr.write('s4 stopping\n');
  await server.close();
  return 0;
}
