// Server memory of each records read kind alone (issue 11: where does the whole-run peak come from?).
// Needs the data dir kept by `node scripts/bench/records-r4.mjs load` (same BENCH_WORK). For each
// variant, a fresh server on that dir, the variant read BENCH_REPEATS times (the body consumed and
// dropped on the client), the server's VmRSS sampled every 100 ms; prints RSS at start, VmHWM
// after, and, with the probe (scripts/bench/mem-probe.mjs, loaded here when MEM_PROBE is 1),
// each thread's peak heap, external and ArrayBuffer bytes.
//
//   BENCH_WORK=/tmp/bench-mem BENCH_S4_PORT=18701 node scripts/bench/mem-reads.mjs [json ndjson msgpack msgpack2 ...]
//
// With MEM_ONE_SERVER=1, one server reads the variants in turn, BENCH_REPEATS + 1 rounds (the
// records bench's R4: a warm-up of each, then rounds of json, ndjson, SDK records(), column()):
//
//   MEM_ONE_SERVER=1 node scripts/bench/mem-reads.mjs json ndjson msgpack2 msgpack2
//
// Knobs: BENCH_REPEATS (3), BENCH_S4_CACHE_BYTES, BENCH_S4_DIST (another build's main.js), MEM_PROBE (1).
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { memory, stop } from './lib/proc.mjs';
import { METRIC, ROOT, URL_, WORK, startS4 } from './lib/kept-records.mjs';

const env = process.env;
const REPEATS = Number(env.BENCH_REPEATS || 3);
const PROBE_DIR = join(WORK, 'probe');
const mb = (b) => Math.round(b / 2 ** 20);

const status = (pid) => memory(pid) ?? { rss: 0, hwm: 0 };

/** GET url, the body counted and dropped as it arrives (the client never holds it). */
function drain(url, headers = {}) {
  return new Promise((ok, fail) => {
    http
      .get(url, { headers }, (res) => {
        let bytes = 0;
        res.on('data', (c) => (bytes += c.length));
        res.on('end', () => (res.statusCode === 200 ? ok(bytes) : fail(new Error(`${url} → ${res.statusCode}`))));
        res.on('error', fail);
      })
      .on('error', fail);
  });
}

async function main() {
  const variants = process.argv.slice(2).length ? process.argv.slice(2) : ['json', 'ndjson', 'msgpack', 'msgpack2'];
  // R4 as records-r4.mjs reads it: the first 10 minutes of the kept plan.
  const p = JSON.parse(readFileSync(join(WORK, 'r4-plan.json'), 'utf8'));
  const from = p.start;
  const to = Math.min(p.end, p.start + 10 * 60_000);
  const q = (fmt) => `${URL_}/v1/query?metric=${METRIC}&from=${from}&to=${to}&format=${fmt}`;
  const reads = {
    json: () => drain(q('json')),
    ndjson: () => drain(q('ndjson')),
    csv: () => drain(q('csv')),
    msgpack: () => drain(q('msgpack'), { accept: 'application/msgpack' }),
    msgpack2: () => drain(q('msgpack'), { accept: 'application/msgpack; columns=2' }),
    r1: () => drain(`${URL_}/v1/query?metric=${METRIC}&tag=machine:m000&from=${p.start}&to=${p.end}&format=json`),
  };
  const one = env.MEM_ONE_SERVER === '1';
  for (const v of one ? [variants] : variants) {
    rmSync(PROBE_DIR, { recursive: true, force: true });
    mkdirSync(PROBE_DIR, { recursive: true });
    const probe = env.MEM_PROBE === '0' ? [] : [`--import=${join(ROOT, 'scripts/bench/mem-probe.mjs')}`];
    const child = await startS4({ env: { MEM_PROBE_OUT: PROBE_DIR }, nodeArgs: probe, log: 'mem-s4.log' });
    await new Promise((r) => setTimeout(r, 1000));
    const startRss = status(child.pid).rss;
    let peak = 0;
    const sampler = setInterval(() => (peak = Math.max(peak, status(child.pid).rss)), 100);
    const rows = [];
    if (one)
      for (let i = 0; i <= REPEATS; i++) {
        const t0 = performance.now();
        for (const x of v) await reads[x]();
        rows.push(`round ${i}: ${(performance.now() - t0).toFixed(0)} ms, HWM ${mb(status(child.pid).hwm)}`);
      }
    else
      for (let i = 0; i < REPEATS; i++) {
        const t0 = performance.now();
        const bytes = await reads[v]();
        rows.push(`${(performance.now() - t0).toFixed(0)} ms/${mb(bytes)} MB; HWM ${mb(status(child.pid).hwm)}`);
      }
    clearInterval(sampler);
    const { rss, hwm } = status(child.pid);
    await stop(child);
    const threads = new Map();
    try {
      for (const line of readFileSync(join(PROBE_DIR, `probe-${child.pid}.ndjson`), 'utf8').split('\n')) {
        if (!line) continue;
        const p = JSON.parse(line);
        const t = threads.get(p.thread) ?? {};
        for (const k of ['heapUsed', 'heapTotal', 'external', 'arrayBuffers']) t[k] = Math.max(t[k] ?? 0, p[k]);
        for (const [s, [, size]] of Object.entries(p.spaces)) t[s] = Math.max(t[s] ?? 0, size);
        threads.set(p.thread, t);
      }
    } catch {
      // no probe
    }
    console.log(`${(one ? v.join('+') : v).padEnd(8)} RSS at start ${mb(startRss)} MiB; VmHWM after ${mb(hwm)} MiB (sampled peak ${mb(peak)}, RSS at end ${mb(rss)}); ${rows.join(' | ')}; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    for (const [t, x] of threads) console.log(`   thread ${t}: ${Object.entries(x).map(([k, n]) => `${k} ${n}`).join(', ')}`);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
