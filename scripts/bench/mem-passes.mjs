// Server memory of the role threads' passes over a kept records data dir (issue 11): rollups and
// compaction decode flushed segments, and a records window decoded whole is ~1 GB of objects.
// Copies $BENCH_WORK/r4-data (from `node scripts/bench/records-r4.mjs load`) without its rollups,
// starts a server on the copy with the probe (scripts/bench/mem-probe.mjs), runs
// POST /v1/admin/rollup then POST /v1/admin/compact, and prints VmHWM after each with every
// thread's peak heap.
//
//   BENCH_WORK=/tmp/bench-mem BENCH_S4_PORT=18701 node scripts/bench/mem-passes.mjs
//
// Knobs: BENCH_S4_DIST (another build's apps/api/dist/main.js, to compare on the same data).
import { cpSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { ok, waitHttp } from './lib/http.mjs';
import { start, stop } from './lib/proc.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const WORK = env.BENCH_WORK || '/tmp/s4-r4';
const PORT = Number(env.BENCH_S4_PORT || 18480);
const URL_ = `http://127.0.0.1:${PORT}`;
const DATA = join(WORK, 'mem-passes-data');
const PROBE_DIR = join(WORK, 'mem-passes-probe');
const mb = (b) => Math.round(b / 2 ** 20);

function hwm(pid) {
  return Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024;
}

function threadPeaks(pid) {
  const threads = new Map();
  for (const line of readFileSync(join(PROBE_DIR, `probe-${pid}.ndjson`), 'utf8').split('\n')) {
    if (!line) continue;
    const p = JSON.parse(line);
    const t = threads.get(p.thread) ?? { heapUsed: 0, heapTotal: 0, arrayBuffers: 0 };
    for (const k of Object.keys(t)) t[k] = Math.max(t[k], p[k]);
    threads.set(p.thread, t);
  }
  return [...threads].map(([t, x]) => `${t} heap ${x.heapUsed}/${x.heapTotal} ab ${x.arrayBuffers}`).join('; ');
}

async function main() {
  rmSync(DATA, { recursive: true, force: true });
  rmSync(PROBE_DIR, { recursive: true, force: true });
  mkdirSync(PROBE_DIR, { recursive: true });
  cpSync(join(WORK, 'r4-data'), DATA, { recursive: true });
  rmSync(join(DATA, 'objects/v1/default/rollup'), { recursive: true, force: true });
  const e = {};
  for (const [k, x] of Object.entries(env)) if (!k.startsWith('S4_') && k !== 'NODE_OPTIONS') e[k] = x;
  Object.assign(e, { S4_HOST: '127.0.0.1', S4_PORT: String(PORT), S4_LOG_LEVEL: 'warn', S4_DATA_DIR: DATA, MEM_PROBE_OUT: PROBE_DIR, MEM_PROBE_MS: '200' });
  const args = [`--import=${join(ROOT, 'scripts/bench/mem-probe.mjs')}`, env.BENCH_S4_DIST || join(ROOT, 'apps/api/dist/main.js')];
  const child = start(process.execPath, args, { env: e, log: join(WORK, 'mem-passes-s4.log') });
  try {
    await waitHttp(`${URL_}/readyz`, 120_000);
    await new Promise((r) => setTimeout(r, 1500));
    console.log(`start: VmHWM ${mb(hwm(child.pid))} MiB`);
    for (const pass of ['rollup', 'compact']) {
      const t0 = performance.now();
      const r = await ok(`${URL_}/v1/admin/${pass}`, { method: 'POST' });
      await new Promise((ok) => setTimeout(ok, 600));
      console.log(`${pass}: ${(performance.now() - t0).toFixed(0)} ms, VmHWM ${mb(hwm(child.pid))} MiB; ${r.body.toString().slice(0, 160)}`);
      console.log(`   ${threadPeaks(child.pid)}`);
    }
    console.log(`load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  } finally {
    await stop(child);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
