import { spawn, spawnSync, type ChildProcess } from 'node:child_process';

/**
 * The real programs the protocol tests drive (Debian packages; scripts/services/programs.sh
 * installs them, and scripts/test.sh runs it). A missing one fails the suite loudly, naming the
 * package, rather than skipping it.
 */
export function requireProgram(binary: string, debianPackage: string): string {
  const found = spawnSync('sh', ['-c', `command -v ${binary}`], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '') throw new Error(`${binary} is not installed: run scripts/services/programs.sh (apt-get install ${debianPackage})`);
  return path;
}

/** A started program whose output is kept for the failure message. */
export class Program {
  private log = '';
  private constructor(private readonly child: ChildProcess) {
    child.stdout?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
    child.stderr?.on('data', (d: Buffer) => (this.log = (this.log + d.toString()).slice(-20_000)));
  }

  static start(binary: string, args: string[], options: { cwd?: string; env?: Record<string, string> } = {}): Program {
    return new Program(spawn(binary, args, { cwd: options.cwd, env: { PATH: process.env.PATH ?? '', ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] }));
  }

  output(): string {
    return this.log;
  }

  exited(): boolean {
    return this.child.exitCode !== null || this.child.signalCode !== null;
  }

  async stop(): Promise<void> {
    if (this.exited()) return;
    const done = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000);
    await done;
    clearTimeout(timer);
  }
}

/** Polls `check` every 200 ms until it returns a value (not undefined) or `ms` pass; then throws with `what`. */
export async function until<T>(what: string, ms: number, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + ms;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`gave up waiting for ${what} after ${ms} ms${last ? `: ${String(last)}` : ''}`);
}
