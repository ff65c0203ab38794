// Late data at a scraper's pace (issue 12): BENCH_SERIES series each send one sample every
// BENCH_INTERVAL_S seconds, in real time, into an hour that closed long ago (a fleet uploading
// what it buffered, a scraper catching up), for BENCH_MINUTES. Runs the embedded server with
// S4_FLUSH_LATE_MS=60000 (late data into a window flushed less than a minute ago waits), then with S4's
// default (0: every periodic pass flushes the late data), and reports per run: server CPU per sample (all threads, /proc, from the
// first write through an admin flush of what was left hot), the parts and samples the periodic
// passes wrote, and that every sample is read back (one series queried whole).
// Usage: npm run build && node scripts/bench/late-data.mjs [repo root of a build, default this one]
//   env: BENCH_SERIES (40000) BENCH_MINUTES (3) BENCH_INTERVAL_S (10) BENCH_RUNS ("60000,default": values of S4_FLUSH_LATE_MS, "default" = unset)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOUR } from './lib/dataset.mjs';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { cpuMs, machine, start, stop } from './lib/proc.mjs';

const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const SERIES = Number(process.env.BENCH_SERIES ?? 40_000);
const MINUTES = Number(process.env.BENCH_MINUTES ?? 3);
const INTERVAL_MS = Number(process.env.BENCH_INTERVAL_S ?? 10) * 1000;
const RUNS = (process.env.BENCH_RUNS ?? '60000,default').split(',');
const ROUNDS = Math.floor((MINUTES * 60_000) / INTERVAL_MS);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function metric(text, name) {
  const line = text.split('\n').find((l) => l.startsWith(`${name} `));
  return line ? Number(line.slice(name.length + 1)) : 0;
}

async function run(lateMs) {
  const dir = mkdtempSync(join(tmpdir(), 's4-late-'));
  const port = 19000 + Math.floor(Math.random() * 1000);
  const url = `http://127.0.0.1:${port}`;
  const env = { ...process.env, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', ...(lateMs === 'default' ? {} : { S4_FLUSH_LATE_MS: lateMs }) };
  delete env.S4_FLUSH_INTERVAL_MS;
  const server = start(process.execPath, [join(root, 'apps/api/dist/main.js')], { env, log: join(dir, 'server.log') });
  try {
    await waitHttp(`${url}/readyz`, 60_000);
    const http = agent(4);
    // Two hours back: closed, and past the flush grace, so the first pass flushes it.
    const hour = Math.floor(Date.now() / HOUR) * HOUR - 2 * HOUR;
    const cpu0 = cpuMs(server.pid);
    const t0 = performance.now();
    let behind = 0;
    for (let r = 0; r < ROUNDS; r++) {
      const due = t0 + r * INTERVAL_MS;
      const wait = due - performance.now();
      if (wait > 0) await sleep(wait);
      else if (wait < -1000) behind++; // the server took more than the interval over the previous round
      const series = [];
      for (let i = 0; i < SERIES; i++) series.push({ metric: `late_m${i % 20}`, tags: { host: `h${Math.floor(i / 20)}` }, ts: [hour + r * INTERVAL_MS], fields: { value: [(i % 1000) + r / 10] } });
      await ok(`${url}/v1/write`, { agent: http, body: JSON.stringify({ series }), headers: { 'content-type': 'application/json' } });
    }
    // One more interval, so the last round meets a periodic pass as the others did; then an admin
    // flush of what is still hot, so both runs are charged for flushing every sample.
    await sleep(INTERVAL_MS);
    const m = (await ok(`${url}/metrics`, { agent: http })).body.toString();
    await ok(`${url}/v1/admin/flush`, { method: 'POST', agent: http });
    const cpu = cpuMs(server.pid) - cpu0;
    const passes = m.split('\n').filter((l) => l.startsWith('s4_worker_passes_total{role="segment"')).reduce((a, l) => a + Number(l.split(' ').pop()), 0);
    const out = {
      lateMs,
      samples: SERIES * ROUNDS,
      cpuUsPerSample: +((cpu * 1000) / (SERIES * ROUNDS)).toFixed(2),
      cpuSeconds: +(cpu / 1000).toFixed(1),
      roundsBehind: behind,
      parts: metric(m, 's4_flush_objects_total'),
      flushedByPasses: metric(m, 's4_flush_samples_total'),
      segmentPasses: passes,
    };
    const q = await request(`${url}/v1/query?${new URLSearchParams({ metric: 'late_m0', tag: 'host:h0', from: String(hour), to: String(hour + HOUR), format: 'json' })}`, { agent: http });
    const body = JSON.parse(q.body.toString());
    const points = (body.series ?? []).reduce((a, s) => a + s.ts.length, 0);
    out.readBack = `${points}/${ROUNDS}`;
    return out;
  } finally {
    await stop(server);
    rmSync(dir, { recursive: true, force: true });
  }
}

const results = [];
for (const lateMs of RUNS) {
  const r = await run(lateMs);
  process.stderr.write(`S4_FLUSH_LATE_MS=${lateMs}: ${JSON.stringify(r)}\n`);
  results.push(r);
}
console.log(JSON.stringify({ series: SERIES, minutes: MINUTES, intervalS: INTERVAL_MS / 1000, results, machine: machine(), date: new Date().toISOString() }, null, 1));
