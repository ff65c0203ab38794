// Queries over a kept cardinality data dir (issue 12): an S4 server started on the `card-embedded`
// directory a `npm run bench -- cardinality` left in BENCH_WORK, then the bench's single-series
// query (one host of node_m0 over the data) and its 1 % tag query (host=~host-[0-9]*00) asked
// Q_REPEATS times each, one after the other: wall time (median, p99) and the server's CPU per
// query from /proc. The server runs with its workers parked, so only the queries use its CPU.
// Usage: npm run build && BENCH_WORK=/tmp/s4-bench node scripts/bench/card-queries.mjs
//   env: BENCH_HOSTS (50000, as the run that wrote the data) BENCH_MINUTES (3) Q_REPEATS (20)
//   BENCH_S4_PORT (18480) S4_CACHE_BYTES (S4's default unless set) Q_TO (required: the run's workload.to)
import { join } from 'node:path';
import { cpuMs, machine, memory, start, stop } from './lib/proc.mjs';
import { agent, request, waitHttp } from './lib/http.mjs';
import { median, percentile } from './lib/stats.mjs';

const env = process.env;
const WORK = env.BENCH_WORK || '/tmp/s4-bench';
const HOSTS = Number(env.BENCH_HOSTS ?? 50_000);
const MINUTES = Number(env.BENCH_MINUTES ?? 3);
const REPEATS = Number(env.Q_REPEATS ?? 20);
const PORT = Number(env.BENCH_S4_PORT ?? 18480);
const ROOT = new URL('../../', import.meta.url).pathname;
const dataDir = join(WORK, 'card-embedded');
const http = agent(4);

const end = Date.parse(env.Q_TO ?? '');
if (!Number.isFinite(end)) throw new Error('Q_TO: the end of the data as the run printed it (workload.to), e.g. 2026-11-27T07:00:00Z');
const from = end - MINUTES * 60_000;

const base = `http://127.0.0.1:${PORT}`;
const parked = { S4_FLUSH_INTERVAL_MS: '3600000', S4_COMPACT_INTERVAL_MS: '86400000', S4_ROLLUP_INTERVAL_MS: '86400000', S4_ORPHAN_SWEEP_INTERVAL_MS: String(7 * 86_400_000) };
const childEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('S4_') || k === 'S4_CACHE_BYTES'));
const child = start(process.execPath, ['--max-old-space-size=12288', join(ROOT, 'apps/api/dist/main.js')], {
  env: { ...childEnv, S4_HOST: '127.0.0.1', S4_PORT: String(PORT), S4_LOG_LEVEL: 'warn', S4_NAMESPACE: 'bench', S4_DATA_DIR: dataDir, S4_REQUEST_TIMEOUT_MS: '600000', ...parked },
  log: join(WORK, 'card-queries.log'),
});
try {
  const t0 = performance.now();
  await waitHttp(`${base}/readyz`, 600_000);
  const startS = (performance.now() - t0) / 1000;
  const queries = {
    single: `/v1/query?metric=node_m0&tag=host:host-${HOSTS - 1}&from=${from}&to=${end}`,
    tag1pct: `/v1/query?${new URLSearchParams({ metric: 'node_m0', match: 'host=~host-[0-9]*00', from: String(from), to: String(end), format: 'json' })}`,
  };
  const out = { date: new Date().toISOString(), machine: machine(), load: (await import('node:os')).loadavg().map((x) => +x.toFixed(2)), from: new Date(from).toISOString(), to: new Date(end).toISOString(), startSeconds: +startS.toFixed(1), queries: {} };
  for (const [name, url] of Object.entries(queries)) {
    const ms = [];
    const cpu = [];
    let series = 0;
    for (let i = 0; i < REPEATS; i++) {
      const c = cpuMs(child.pid);
      const a = performance.now();
      const r = await request(`${base}${url}`, { agent: http, timeoutMs: 600_000 });
      ms.push(performance.now() - a);
      cpu.push(cpuMs(child.pid) - c);
      if (r.status !== 200) throw new Error(`${name}: ${r.status} ${r.body.toString().slice(0, 300)}`);
      series = JSON.parse(r.body.toString()).series.length;
    }
    const sorted = [...ms].sort((x, y) => x - y);
    out.queries[name] = { series, firstMs: +ms[0].toFixed(1), medianMs: +median(ms).toFixed(1), p99Ms: +percentile(sorted, 99).toFixed(1), cpuMsMedian: median(cpu), cpuMsFirst: cpu[0] };
  }
  out.rssMB = Math.round((memory(child.pid)?.rss ?? 0) / 2 ** 20);
  console.log(JSON.stringify(out, null, 1));
} finally {
  await stop(child);
}
process.exit(0);
