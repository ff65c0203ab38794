// Responsiveness benchmark (issue 10): does /readyz stay fast while a big flush and a rollup run?
// Starts the built embedded server, writes BENCH_SERIES series × BENCH_SAMPLES samples into a
// closed hour, then triggers POST /v1/admin/flush and POST /v1/admin/rollup while sampling
// GET /readyz every 50 ms (each probe is sent on schedule, not after the previous answer, so a
// blocked event loop shows up as long latencies). Prints p50/p99/max per phase.
// Usage: npm run build && node scripts/bench/responsiveness.mjs   (env: BENCH_SERIES, BENCH_SAMPLES, BENCH_BATCH)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { HOUR } from './lib/dataset.mjs';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { machine, start, stop } from './lib/proc.mjs';
import { percentile } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
const { Packr } = require('msgpackr');
const packr = new Packr({ useRecords: false, moreTypes: true });

const SERIES = Number(process.env.BENCH_SERIES ?? 100_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 4);
const BATCH = Number(process.env.BENCH_BATCH ?? 5_000);
const PROBE_MS = 50;
const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 's4-responsiveness-'));
const port = 19000 + Math.floor(Math.random() * 1000);
const url = `http://127.0.0.1:${port}`;
const env = {
  ...process.env,
  S4_DATA_DIR: dir,
  S4_PORT: String(port),
  S4_HOST: '127.0.0.1',
  S4_LOG_LEVEL: 'warn',
  S4_EMBEDDED_FSYNC: 'never',
  // Defaults (periodic flush and rollups on, as users run S4); RESPONSIVENESS_WORKERS=off leaves
  // only the admin calls below, so each phase is measured alone.
  ...(process.env.RESPONSIVENESS_WORKERS === 'off' ? { S4_FLUSH_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000' } : {}),
};

const server = start(process.execPath, [join(root, 'apps/api/dist/main.js')], { env, log: join(dir, 'server.log') });
try {
  await waitHttp(`${url}/readyz`, 60_000);

  // A closed hour, two hours back: the admin flush takes every closed window.
  const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
  const ts = Array.from({ length: SAMPLES }, (_, i) => hour + i * 60_000);
  const t0 = performance.now();
  for (let i = 0; i < SERIES; i += BATCH) {
    const series = [];
    for (let s = i; s < Math.min(SERIES, i + BATCH); s++)
      series.push({ metric: 'bench.resp', tags: { host: `h${s % 1000}`, dev: `d${s}` }, ts, fields: { value: ts.map((_, k) => s + k * 0.5) } });
    await ok(`${url}/v1/write`, { body: packr.pack({ series }), headers: { 'content-type': 'application/msgpack' } });
  }
  const loadMs = performance.now() - t0;
  process.stderr.write(`loaded ${SERIES} series × ${SAMPLES} samples in ${(loadMs / 1000).toFixed(1)} s\n`);

  const probes = agent(256);
  /** Run `work` while probing /readyz every PROBE_MS; returns the probe latencies and the work's result. */
  async function probed(work) {
    const latencies = [];
    const inflight = new Set();
    let failures = 0;
    const timer = setInterval(() => {
      const sent = performance.now();
      const p = request(`${url}/readyz`, { agent: probes }).then(
        (r) => {
          if (r.status !== 200) failures++;
          latencies.push(performance.now() - sent);
        },
        () => failures++,
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    }, PROBE_MS);
    const started = performance.now();
    const result = await work();
    const ms = performance.now() - started;
    clearInterval(timer);
    await Promise.all(inflight);
    const sorted = Float64Array.from(latencies).sort();
    return { ms, result, probes: sorted.length, failures, p50: percentile(sorted, 50), p99: percentile(sorted, 99), max: sorted[sorted.length - 1] ?? NaN };
  }

  const flush = await probed(async () => JSON.parse((await ok(`${url}/v1/admin/flush`, { method: 'POST' })).body.toString()));
  const rollup = await probed(async () => JSON.parse((await ok(`${url}/v1/admin/rollup`, { method: 'POST' })).body.toString()));
  const idle = await probed(() => new Promise((r) => setTimeout(r, 2_000)));

  const f = (x) => x.toFixed(1).padStart(8);
  const row = (name, p) => `${name.padEnd(8)} ${f(p.ms / 1000)} s ${String(p.probes).padStart(6)} ${f(p.p50)} ${f(p.p99)} ${f(p.max)} ${String(p.failures).padStart(8)}`;
  console.log(`machine: ${JSON.stringify(machine())}, date: ${new Date().toISOString()}`);
  console.log(`dataset: ${SERIES} series × ${SAMPLES} samples (one closed hour), embedded, fsync never; load ${(loadMs / 1000).toFixed(1)} s`);
  console.log(`flush: ${JSON.stringify(flush.result)}`);
  console.log(`rollup: ${JSON.stringify(rollup.result)}`);
  console.log(`phase    duration   probes  p50 ms   p99 ms   max ms  non-200`);
  console.log(row('flush', flush));
  console.log(row('rollup', rollup));
  console.log(row('idle', idle));
  probes.destroy();
} finally {
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
