import { PassThrough, Readable } from 'node:stream';
import { main } from '../src/main.js';
import type { Io } from '../src/io.js';

export interface RunResult {
  code: number;
  stdout: Buffer;
  stderr: string;
}

/** Runs the CLI in-process, capturing stdout (as bytes) and stderr. */
export async function runCli(argv: string[], options: { env?: Record<string, string>; stdin?: Buffer | string; tty?: boolean } = {}): Promise<RunResult> {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  const stdout = Object.assign(new PassThrough(), { isTTY: options.tty ?? false, columns: 100 });
  const stderr = Object.assign(new PassThrough(), { isTTY: false, columns: 100 });
  stdout.on('data', (b: Buffer) => out.push(b));
  stderr.on('data', (b: Buffer) => err.push(b));
  const io: Io = {
    stdin: Readable.from(options.stdin === undefined ? [] : [Buffer.from(options.stdin)]),
    stdout,
    stderr,
    env: options.env ?? {},
    interrupted: () => new Promise(() => undefined),
  };
  const code = await main(argv, io);
  return { code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') };
}
