import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { S4HttpError } from '@s4/sdk';

/** Everything a command touches outside itself, so tests can run commands in-process. */
export interface Io {
  stdin: Readable;
  stdout: Writable & { isTTY?: boolean; columns?: number };
  stderr: Writable & { isTTY?: boolean; columns?: number };
  env: Record<string, string | undefined>;
  /** Resolves on Ctrl-C / SIGTERM (serve waits on it). */
  interrupted: () => Promise<void>;
}

export function processIo(): Io {
  return {
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    env: process.env,
    interrupted: () => new Promise((resolve) => {
      process.once('SIGINT', () => resolve());
      process.once('SIGTERM', () => resolve());
    }),
  };
}

/** Writes with back-pressure: waits for 'drain' instead of buffering a whole export in memory. */
export async function writeOut(out: Writable, chunk: Uint8Array | string): Promise<void> {
  if (!out.write(chunk)) await once(out, 'drain');
}

/** A command-line mistake: exit code 2 with the usage hint. */
export class UsageError extends Error {}

/** ` (path: message)` of the first issue of an invalid_request anywhere in the cause chain, else ''. */
export function issueDetail(error: unknown): string {
  let e: unknown = error;
  while (e instanceof Error && !(e instanceof S4HttpError)) e = e.cause;
  const issue = e instanceof S4HttpError ? e.issues[0] : undefined;
  return issue === undefined ? '' : ` (${issue.path}: ${issue.message})`;
}
