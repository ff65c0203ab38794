import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { freePort } from '../support/s4-process.js';
import { tempDir } from '../support/servers.js';

const MAIN = fileURLToPath(new URL('../../apps/api/dist/main.js', import.meta.url));

/** Start the built entry, read its command line and environment from /proc once it answers, stop it with SIGTERM. */
async function runtimeOf(extra: Record<string, string>): Promise<{ argv: string[]; env: string[]; exit: number | null }> {
  const port = await freePort();
  const child = spawn(process.execPath, [MAIN], {
    env: { PATH: process.env.PATH ?? '', S4_DATA_DIR: tempDir('runtime'), S4_HOST: '127.0.0.1', S4_PORT: String(port), S4_LOG_LEVEL: 'warn', S4_EMBEDDED_FSYNC: 'never', ...extra },
    stdio: 'ignore',
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  try {
    for (let i = 0; ; i++) {
      const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok, () => false);
      if (up) break;
      if (i > 300) throw new Error('the server did not start');
      await new Promise((r) => setTimeout(r, 100));
    }
    // The same process id as spawned: the re-execution replaced the process in place.
    const argv = readFileSync(`/proc/${child.pid}/cmdline`, 'utf8').split('\0');
    const env = readFileSync(`/proc/${child.pid}/environ`, 'utf8').split('\0');
    child.kill('SIGTERM');
    return { argv, env, exit: await exited };
  } finally {
    child.kill('SIGKILL');
  }
}

describe.runIf(process.platform === 'linux' && typeof process.execve === 'function')('runtime tuning (S4_RUNTIME_TUNING)', () => {
  it('re-executes the server in place with a small young generation and glibc malloc tuning, and still stops cleanly', async () => {
    const r = await runtimeOf({});
    expect(r.argv).toContain('--max-semi-space-size=32');
    expect(r.env).toContain('MALLOC_ARENA_MAX=2');
    expect(r.env).toContain('MALLOC_MMAP_THRESHOLD_=131072');
    expect(r.exit).toBe(0);
  }, 60_000);

  it("keeps the operator's own settings, and the runtime's defaults when turned off", async () => {
    const own = await runtimeOf({ MALLOC_ARENA_MAX: '4' });
    expect(own.env).toContain('MALLOC_ARENA_MAX=4');
    const flagged = await runtimeOf({ NODE_OPTIONS: '--max-semi-space-size=8' });
    expect(flagged.argv).not.toContain('--max-semi-space-size=32');
    expect(flagged.env.some((e) => e.startsWith('MALLOC_ARENA_MAX='))).toBe(false);
    const off = await runtimeOf({ S4_RUNTIME_TUNING: 'false' });
    expect(off.argv).not.toContain('--max-semi-space-size=32');
    expect(off.env.some((e) => e.startsWith('MALLOC_'))).toBe(false);
    expect(off.exit).toBe(0);
  }, 90_000);
});
