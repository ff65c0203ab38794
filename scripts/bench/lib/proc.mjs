// Processes, memory and disk: what the bench reads off the machine.
import { spawn } from 'node:child_process';
import { readFileSync, readdirSync, lstatSync, openSync, existsSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { join } from 'node:path';

/** VmHWM (peak RSS) and VmRSS of a process, in bytes; null when it is gone. */
export function memory(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(s)?.[1] ?? NaN) * 1024;
    return { hwm: kb('VmHWM'), rss: kb('VmRSS') };
  } catch {
    return null;
  }
}

/** Sum of the sizes of the regular files under a directory (apparent bytes) and their count. */
export function dirBytes(dir) {
  let bytes = 0;
  let files = 0;
  if (!existsSync(dir)) return { bytes, files };
  const walk = (d) => {
    let names;
    try {
      names = readdirSync(d);
    } catch (e) {
      if (e.code === 'ENOENT') return;
      throw e;
    }
    for (const name of names) {
      const p = join(d, name);
      // The server's workers keep running: a temporary file may be renamed or removed under the walk.
      const st = lstatSync(p, { throwIfNoEntry: false });
      if (!st) continue;
      if (st.isDirectory()) walk(p);
      else if (st.isFile()) {
        bytes += st.size;
        files++;
      }
    }
  };
  walk(dir);
  return { bytes, files };
}

/** Start a server as our child, stdout/stderr to a log file. */
export function start(cmd, args, { env, log }) {
  const fd = openSync(log, 'a');
  const child = spawn(cmd, args, { env, stdio: ['ignore', fd, fd] });
  child.exitedPromise = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return child;
}

/** SIGTERM our child and wait for it; SIGKILL after `ms`. */
export async function stop(child, ms = 30_000) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  const t = setTimeout(() => child.kill('SIGKILL'), ms);
  await child.exitedPromise;
  clearTimeout(t);
}

export function machine() {
  const c = cpus();
  return { cpu: c[0]?.model ?? 'unknown', cores: c.length, ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10, node: process.version };
}

/** utime + stime of a process (all its threads) from /proc, in ms (USER_HZ = 100 on Linux). */
export function cpuMs(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}
