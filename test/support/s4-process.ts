import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createServer } from 'node:net';

const MAIN = fileURLToPath(new URL('../../apps/api/dist/main.js', import.meta.url));

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

/** A whole S4 server process (the built `npm start` entry), as an operator would run it. */
export class S4Process {
  private child: ChildProcess | null = null;
  private log = '';
  readonly url: string;

  constructor(
    private readonly env: Record<string, string>,
    readonly port: number,
  ) {
    this.url = `http://127.0.0.1:${port}`;
  }

  static async start(env: Record<string, string>, waitFor: '/readyz' | '/healthz' = '/readyz'): Promise<S4Process> {
    const p = new S4Process(env, await freePort());
    await p.start(waitFor);
    return p;
  }

  /** Spawn and wait until `waitFor` answers 200 (/healthz: up, whether or not its stores and lag are ready). */
  async start(waitFor: '/readyz' | '/healthz' = '/readyz'): Promise<void> {
    const child = spawn(process.execPath, [MAIN], {
      env: { PATH: process.env.PATH ?? '', ...this.env, S4_PORT: String(this.port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    this.child = child;
    child.stdout.on('data', (d: Buffer) => (this.log += d.toString()));
    child.stderr.on('data', (d: Buffer) => (this.log += d.toString()));
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`s4 exited with ${child.exitCode}:\n${this.log}`);
      try {
        const r = await fetch(`${this.url}${waitFor}`);
        if (r.ok) return;
      } catch {
        // not listening yet
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`s4 not ready after 30 s:\n${this.log}`);
  }

  /** SIGKILL: no shutdown hooks, no flushing of anything; a crash. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }

  output(): string {
    return this.log;
  }
}
