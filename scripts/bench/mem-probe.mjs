// Memory probe for a server under a bench (issues 11/12): loaded with
//   BENCH_S4_NODE_ARGS="--import=/abs/path/scripts/bench/mem-probe.mjs" and MEM_PROBE_OUT=/dir
// it runs in the main thread and in every worker thread (they inherit execArgv) and appends, every
// MEM_PROBE_MS (250), one JSON line per thread to MEM_PROBE_OUT/probe-PID.ndjson: process RSS,
// this isolate's heap, external and ArrayBuffer bytes, and V8's heap spaces (used / committed).
import { appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { getHeapSpaceStatistics } from 'node:v8';
import { isMainThread, threadId, workerData } from 'node:worker_threads';

const dir = process.env.MEM_PROBE_OUT;
if (dir) {
  const file = join(dir, `probe-${process.pid}.ndjson`);
  const mb = (n) => Math.round(n / 2 ** 20);
  const hwm = () => {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : 0;
  };
  const t = setInterval(() => {
    const u = process.memoryUsage();
    const spaces = {};
    for (const s of getHeapSpaceStatistics()) spaces[s.space_name.replace(/_space$/, '')] = [mb(s.space_used_size), mb(s.space_size)];
    const line = { t: Date.now(), thread: isMainThread ? 'main' : `${threadId}:${workerData?.role ?? '?'}`, rss: mb(u.rss), hwm: hwm(), heapUsed: mb(u.heapUsed), heapTotal: mb(u.heapTotal), external: mb(u.external), arrayBuffers: mb(u.arrayBuffers), spaces };
    try {
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    } catch {
      /* the bench may have removed the dir */
    }
  }, Number(process.env.MEM_PROBE_MS ?? 250));
  t.unref();
}
