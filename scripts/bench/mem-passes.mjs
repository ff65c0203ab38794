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
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { ok } from './lib/http.mjs';
import { memory, stop } from './lib/proc.mjs';
import { ROOT, URL_, WORK, startS4 } from './lib/kept-records.mjs';

const DATA = join(WORK, 'mem-passes-data');
const PROBE_DIR = join(WORK, 'mem-passes-probe');
const mb = (b) => Math.round(b / 2 ** 20);

const hwm = (pid) => memory(pid)?.hwm ?? 0;

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
  const child = await startS4({ env: { MEM_PROBE_OUT: PROBE_DIR, MEM_PROBE_MS: '200' }, nodeArgs: [`--import=${join(ROOT, 'scripts/bench/mem-probe.mjs')}`], dir: DATA, log: 'mem-passes-s4.log' });
  try {
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
