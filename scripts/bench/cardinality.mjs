// Cardinality workload (issue 12): BENCH_METRICS metrics × BENCH_HOSTS hosts (tags host, dc),
// one sample per series every BENCH_INTERVAL_S seconds over BENCH_MINUTES, half of the hosts
// replaced by new ones half-way (churn), written as a scraper fleet would: a scrape round of every
// active series in bodies of at most BENCH_BATCH_SERIES series (one body per round below it, as
// every run up to 40,000 series sent), BENCH_CLIENTS bodies in flight. The data is the hour before the current one (closed), so S4's
// periodic flush works while the data arrives, as it does for late scrapes. S4 runs with its
// defaults (periodic flush, rollups, compaction; only the compaction settle time is 0 so that the
// hour can be folded right after); VictoriaMetrics runs in the same run on the same data.
// Usage: npm run bench -- cardinality   (run.sh builds S4, installs VictoriaMetrics, starts Redis/S3)
//   knobs: BENCH_METRICS (20) BENCH_HOSTS (50000: 1,000,000 active series) BENCH_MINUTES (60)
//   BENCH_INTERVAL_S (10) BENCH_MODES (embedded; add redis+s3) BENCH_BATCH_SERIES (50000: ~5 MB
//   of S4 JSON a body) BENCH_CLIENTS (2; BENCH_ROUNDS_IN_FLIGHT is its old name: bodies in flight)
//   BENCH_SERIES_CACHE_ENTRIES (S4_SERIES_CACHE_ENTRIES of the S4 server; default: S4's own
//   65,536 up to that many active series, else the active series rounded up to a power of two)
//   BENCH_REPEATS (5) BENCH_WRITE_DOC (1: docs/bench-results/cardinality-latest.json)
//   BENCH_CPU_PROF (0; 1 = the S4 server runs with --cpu-prof into $BENCH_WORK/prof)
//   BENCH_S4_NODE_ARGS (extra node options for the S4 process, e.g. --heap-prof; space-separated)
// Quick try: BENCH_METRICS=5 BENCH_HOSTS=200 BENCH_MINUTES=10 BENCH_WRITE_DOC=0 npm run bench -- cardinality
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { dirBytes, machine, memory, start, stop } from './lib/proc.mjs';
import { registered } from './lib/at-rest.mjs';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { median, percentile } from './lib/stats.mjs';
import { prng } from './lib/dataset.mjs';

const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  metrics: num('BENCH_METRICS', 20),
  hosts: num('BENCH_HOSTS', 50_000),
  minutes: num('BENCH_MINUTES', 60),
  intervalS: num('BENCH_INTERVAL_S', 10),
  modes: (env.BENCH_MODES || 'embedded').split(',').map((s) => s.trim()).filter(Boolean),
  batchSeries: num('BENCH_BATCH_SERIES', 50_000),
  inFlight: num('BENCH_CLIENTS', num('BENCH_ROUNDS_IN_FLIGHT', 2)),
  seriesCache: num('BENCH_SERIES_CACHE_ENTRIES', 0),
  repeats: num('BENCH_REPEATS', 5),
  writeDoc: env.BENCH_WRITE_DOC !== '0',
  s4Port: num('BENCH_S4_PORT', 18480),
  vmPort: num('BENCH_VM_PORT', 18428),
};
const ROOT = new URL('../../', import.meta.url).pathname;
const nodeArgs = (env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean);
const WORK = env.BENCH_WORK || '/tmp/s4-bench';
const HOUR = 3_600_000;
const log = (...a) => console.error(`[cardinality ${new Date().toISOString().slice(11, 19)}]`, ...a);
const http = agent(16);

// ---------------------------------------------------------------- the workload
const rounds = Math.floor((K.minutes * 60) / K.intervalS);
const end = Math.floor(Date.now() / HOUR) * HOUR; // the data ends where the current hour starts
const start0 = end - K.minutes * 60_000;
const churnRound = Math.floor(rounds / 2);
/** Hosts scraped in a round: 0..H-1, then from the churn on, the first half replaced by H..1.5H-1. */
const hostsOf = (r) => (r < churnRound ? [0, K.hosts] : [Math.floor(K.hosts / 2), K.hosts + Math.floor(K.hosts / 2)]);
const seriesTotal = K.metrics * (K.hosts + Math.floor(K.hosts / 2));
const hostName = (h) => `host-${h}`;
const dcOf = (h) => `dc-${h % 8}`;

/** Per series a random walk with two decimals, as gauges of node exporters look; deterministic per seed. */
function values(seed) {
  const rand = prng(seed);
  const state = new Float64Array(K.metrics * (K.hosts + Math.ceil(K.hosts / 2)));
  for (let i = 0; i < state.length; i++) state[i] = Math.round(rand() * 10_000) / 100;
  return (i) => (state[i] = Math.round((state[i] + (rand() - 0.5) * 2) * 100) / 100);
}

/** Hosts a body holds: whole hosts, at most BENCH_BATCH_SERIES series (at least one host). */
const hostsPerBody = Math.max(1, Math.floor(K.batchSeries / K.metrics));

/**
 * The scrape rounds as bodies of at most BENCH_BATCH_SERIES series, S4 JSON columnar (one entry per
 * series) or Prometheus text for VictoriaMetrics; `last` marks a round's last body. Made as sent,
 * so only the bodies in flight are in memory.
 */
function* roundBodies(target) {
  const next = values(7);
  const prefix = new Map();
  for (let r = 0; r < rounds; r++) {
    const ts = start0 + r * K.intervalS * 1000;
    const [h0, h1] = hostsOf(r);
    for (let b0 = h0; b0 < h1; b0 += hostsPerBody) {
      const b1 = Math.min(h1, b0 + hostsPerBody);
      const parts = [];
      for (let h = b0; h < b1; h++)
        for (let m = 0; m < K.metrics; m++) {
          const i = h * K.metrics + m;
          const v = next(i);
          if (target === 's4') {
            let p = prefix.get(i);
            if (p === undefined) prefix.set(i, (p = `{"metric":"node_m${m}","tags":{"host":"${hostName(h)}","dc":"${dcOf(h)}"},"ts":[`));
            parts.push(`${p}${ts}],"fields":{"value":[${v}]}}`);
          } else parts.push(`node_m${m}{host="${hostName(h)}",dc="${dcOf(h)}"} ${v} ${ts}`);
        }
      const body = target === 's4' ? `{"series":[${parts.join(',')}]}` : `${parts.join('\n')}\n`;
      yield { round: r, last: b1 === h1, samples: (b1 - b0) * K.metrics, body: Buffer.from(body) };
    }
    if (r === churnRound) prefix.clear(); // the replaced hosts' prefixes are not needed again
  }
}

// ---------------------------------------------------------------- measuring
/** Probes every 250 ms while `until` is pending: /readyz and a single-series query, with what the server reports about its flushes. */
function probe(base, single, isS4) {
  const samples = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const t = Date.now();
      const a = performance.now();
      let ready = NaN;
      let query = NaN;
      let live = NaN;
      try {
        // /healthz answers from the event loop alone; /readyz also waits on the stores (the
        // embedded object store's check queues behind the libuv thread pool's file writes).
        if (isS4) {
          const h = await request(`${base}/healthz`, { agent: http, timeoutMs: 30_000 });
          if (h.status === 200) live = performance.now() - a;
        }
        const a2 = performance.now();
        const r = await request(`${base}${isS4 ? '/readyz' : '/health'}`, { agent: http, timeoutMs: 30_000 });
        if (r.status === 200) ready = performance.now() - a2;
        const b = performance.now();
        const q = await request(`${base}${single}`, { agent: http, timeoutMs: 30_000 });
        if (q.status === 200) query = performance.now() - b;
      } catch {
        // counted as missing
      }
      samples.push({ t, ready, query, live });
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

/** The HTTP thread's event-loop delay since the previous scrape (s4_event_loop_delay_seconds), in ms by quantile; null before the metric existed. */
async function loopDelay(base) {
  const text = (await request(`${base}/metrics`, { agent: http })).body.toString();
  const out = {};
  for (const [, q, v] of text.matchAll(/^s4_event_loop_delay_seconds\{quantile="([\d.]+)"\} ([\d.e+-]+)$/gm)) out[q === '1' ? 'max' : `p${Math.round(Number(q) * 100)}`] = Math.round(Number(v) * 1e4) / 10;
  return Object.keys(out).length ? out : null;
}

const p = (xs, q) => {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  return s.length ? Math.round(percentile(s, q * 100) * 10) / 10 : null;
};

async function ingest(base, target, path, contentType, pid) {
  const done = []; // [endTime, samples]
  const roundMs = [];
  let peak = 0;
  const sampler = setInterval(() => (peak = Math.max(peak, memory(pid)?.hwm ?? 0)), 1000);
  const cpu0 = cpuMs(pid);
  const t0 = performance.now();
  const it = roundBodies(target);
  let failed = null;
  // A round's time: from its first body sent to its last acknowledged (its bodies overlap those of the rounds beside it).
  const roundStart = [];
  const roundEnd = [];
  const worker = async () => {
    for (let n = it.next(); !n.done && !failed; n = it.next()) {
      const b = n.value;
      const a = performance.now();
      roundStart[b.round] ??= a;
      try {
        await ok(`${base}${path}`, { method: 'POST', body: b.body, headers: { 'content-type': contentType }, agent: http, timeoutMs: 600_000 });
      } catch (e) {
        failed = e;
        throw e;
      }
      const e = performance.now();
      roundEnd[b.round] = Math.max(roundEnd[b.round] ?? 0, e);
      done.push([e, b.samples]);
    }
  };
  await Promise.all(Array.from({ length: K.inFlight }, worker));
  clearInterval(sampler);
  for (let r = 0; r < rounds; r++) if (roundEnd[r] !== undefined) roundMs[r] = roundEnd[r] - roundStart[r];
  const ms = performance.now() - t0;
  const cpu1 = cpuMs(pid);
  const samples = done.reduce((a, [, n]) => a + n, 0);
  // Samples acknowledged per 10 s window of wall time (the last, partial window left out).
  const windows = [];
  for (const [e, n] of done) {
    const w = Math.floor((e - t0) / 10_000);
    windows[w] = (windows[w] ?? 0) + n;
  }
  const full = Array.from({ length: Math.floor(ms / 10_000) }, (_, w) => (windows[w] ?? 0) / 10);
  // Rounds slower than 10 s leave windows with no acknowledgement at all; per-round rates say it too.
  const roundRates = roundMs.map((t, r) => (K.metrics * (hostsOf(r)[1] - hostsOf(r)[0])) / (t / 1000)).filter(Number.isFinite);
  return {
    samples,
    bodies: done.length,
    seconds: +(ms / 1000).toFixed(1),
    samplesPerSec: Math.round(samples / (ms / 1000)),
    windows10s: full.length ? { slowest: Math.round(Math.min(...full)), median: Math.round(median(full)), ratio: +(Math.min(...full) / median(full)).toFixed(2) } : null,
    rounds: { slowestPerSec: Math.round(Math.min(...roundRates)), medianPerSec: Math.round(median(roundRates)), ratio: +(Math.min(...roundRates) / median(roundRates)).toFixed(2) },
    churnRoundMs: Math.round(roundMs[churnRound] ?? NaN),
    medianRoundMs: Math.round(median(roundMs.filter(Number.isFinite))),
    newSeriesPerSec: Math.round((K.metrics * Math.floor(K.hosts / 2)) / ((roundMs[churnRound] ?? NaN) / 1000)),
    peakRssDuringIngestMB: Math.round(peak / 2 ** 20),
    // Server CPU while the rounds were written (user + system, 10 ms ticks), per sample: less
    // moved by other load on the machine than samples/s. `mainThread`: S4's HTTP thread.
    cpuUsPerSample: cpu0 && cpu1 ? { process: +(((cpu1.process - cpu0.process) * 1000) / samples).toFixed(2), mainThread: +(((cpu1.main - cpu0.main) * 1000) / samples).toFixed(2) } : null,
  };
}

/** CPU milliseconds (user + system) of a process and of its main thread, from /proc; null when unreadable. */
function cpuMs(pid) {
  const ticks = (file) => {
    const f = readFileSync(file, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
    return Number(rest[11]) + Number(rest[12]);
  };
  try {
    const hz = 100; // USER_HZ on Linux
    return { process: (ticks(`/proc/${pid}/stat`) * 1000) / hz, main: (ticks(`/proc/${pid}/task/${pid}/stat`) * 1000) / hz };
  } catch {
    return null;
  }
}

async function timedQuery(url, repeats) {
  const ms = [];
  let body = null;
  for (let i = 0; i < repeats; i++) {
    const a = performance.now();
    const r = await request(url, { agent: http, timeoutMs: 600_000 });
    if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.body.toString().slice(0, 300)}`);
    ms.push(performance.now() - a);
    body = r.body;
  }
  return { ms: Math.round(median(ms) * 10) / 10, first: Math.round(ms[0] * 10) / 10, bytes: body.length, body };
}

// ---------------------------------------------------------------- servers
function childEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra };
}

/** Series in the largest body. */
const bodySeries = Math.min(K.metrics * K.hosts, hostsPerBody * K.metrics);
/** The S4 server's S4_SERIES_CACHE_ENTRIES: every active series hits (see the header). */
const seriesCacheEntries = K.seriesCache || (K.metrics * K.hosts <= 65_536 ? 65_536 : 2 ** Math.ceil(Math.log2(K.metrics * K.hosts)));

function s4Env(mode, dataDir) {
  const common = {
    S4_HOST: '127.0.0.1',
    S4_PORT: String(K.s4Port),
    S4_LOG_LEVEL: 'warn',
    S4_NAMESPACE: 'bench',
    S4_DATA_DIR: dataDir,
    // A body of BENCH_BATCH_SERIES series (or the whole round below it) is one request: let it in.
    S4_MAX_SAMPLES_PER_REQUEST: String(Math.max(1_000_000, bodySeries)),
    S4_MAX_BODY_BYTES: String(Math.min(1024 ** 3, Math.max(64 * 2 ** 20, bodySeries * 120))),
    S4_SERIES_CACHE_ENTRIES: String(seriesCacheEntries),
    S4_COMPACT_SETTLE_MS: '0',
    // The admin passes over the whole dataset answer when done; on a loaded machine that is minutes.
    S4_REQUEST_TIMEOUT_MS: '1800000',
  };
  if (mode === 'embedded') return common;
  if (mode === 'redis+s3')
    return {
      ...common,
      S4_REDIS_URL: env.S4_REDIS_URL,
      S4_S3_BUCKET: 's4-cardinality',
      S4_S3_ENDPOINT: env.S4_S3_ENDPOINT,
      S4_S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: env.AWS_REGION || 'us-east-1',
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
    };
  throw new Error(`unknown mode ${mode}`);
}

async function runS4(mode) {
  const dataDir = join(WORK, `card-${mode}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const prof = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'prof')}`] : [];
  const child = start(process.execPath, ['--max-old-space-size=12288', ...prof, ...nodeArgs, join(ROOT, 'apps/api/dist/main.js')], { env: childEnv(s4Env(mode, dataDir)), log: join(WORK, `card-${mode}.log`) });
  const base = `http://127.0.0.1:${K.s4Port}`;
  try {
    await Promise.race([waitHttp(`${base}/readyz`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited during start: ${JSON.stringify(x)}`)))]);
    const single = `/v1/query?metric=node_m0&tag=host:${hostName(K.hosts - 1)}&from=${start0}&to=${end}`;
    log(`S4 ${mode}: ingesting ${rounds} rounds`);
    await loopDelay(base); // starts the delay measured over the writes
    const pr = probe(base, single, true);
    const redisWatch = mode === 'redis+s3' ? await watchRedis() : null;
    const ing = await ingest(base, 's4', '/v1/write', 'application/json', child.pid);
    const during = await pr.stop();
    // Every probe with its start time, to line up with the server's own records (loop delay, GC).
    writeFileSync(join(WORK, `probes-${mode}.json`), JSON.stringify(during));
    const ingestLoop = await loopDelay(base);
    const redis = await redisWatch?.stop(ing.samples);
    log(`S4 ${mode}: ${JSON.stringify(ing)}`);
    // Logged now: a later pass that fails (an S3 timeout on a loaded machine) must not lose them.
    log(`S4 ${mode} during ingest: query p50/p90/p99 ${[0.5, 0.9, 0.99].map((q) => p(during.map((s) => s.query), q)).join('/')} ms, readyz p99 ${p(during.map((s) => s.ready), 0.99)} ms, healthz p50/p99 ${p(during.map((s) => s.live), 0.5)}/${p(during.map((s) => s.live), 0.99)} ms, ${during.length} probes; event-loop delay ms ${JSON.stringify(ingestLoop)}; Redis ${JSON.stringify(redis ?? null)}`);
    // Everything flushed, then the hour folded, then rollups of the folded part; probed meanwhile.
    const pr2 = probe(base, single, true);
    const tf = performance.now();
    await ok(`${base}/v1/admin/flush`, { method: 'POST', agent: http, timeoutMs: 1_800_000 });
    const flushS = (performance.now() - tf) / 1000;
    const flushProbe = await pr2.stop();
    const flushLoop = await loopDelay(base);
    writeFileSync(join(WORK, `probes-${mode}-flush.json`), JSON.stringify(flushProbe));
    const pr3 = probe(base, single, true);
    const tc = performance.now();
    const compact = JSON.parse((await ok(`${base}/v1/admin/compact`, { method: 'POST', agent: http, timeoutMs: 1_800_000 })).body.toString());
    const compactS = (performance.now() - tc) / 1000;
    const compactProbe = await pr3.stop();
    const tr = performance.now();
    await ok(`${base}/v1/admin/rollup`, { method: 'POST', agent: http, timeoutMs: 1_800_000 });
    const rollupS = (performance.now() - tr) / 1000;
    const hwm = memory(child.pid)?.hwm ?? 0;
    const objects = mode === 'embedded' ? join(dataDir, 'objects', 'v1', 'bench') : join(env.BENCH_S3_DATA_DIR ?? '', 's4-cardinality', 'v1', 'bench');
    // What the catalogs name (replaced parts wait out their delete grace, superseded rollups stay until retention).
    const seg = registered(join(objects, 'cat'));
    const rollup = registered(join(objects, 'rollup', 'cat'));
    const cat = dirBytes(join(objects, 'cat'));
    const leftBehind = dirBytes(join(objects, 'seg')).bytes + dirBytes(join(objects, 'rollup', 'obj')).bytes - seg.bytes - rollup.bytes;
    const tag = await tagQuery(base, 's4');
    const one = await timedQuery(`${base}${single}`, K.repeats);
    const redisHwm = mode === 'redis+s3' && env.BENCH_REDIS_PIDFILE ? (memory(Number(execFileSync('cat', [env.BENCH_REDIS_PIDFILE], { encoding: 'utf8' }).trim()))?.hwm ?? 0) : 0;
    const metrics = (await request(`${base}/metrics`, { agent: http })).body.toString();
    const flushPasses = /s4_flush_seconds_count (\d+)/.exec(metrics)?.[1];
    const flushSum = /s4_flush_seconds_sum ([\d.e+-]+)/.exec(metrics)?.[1];
    // Every pass of each worker role, periodic and admin (s4_worker_pass_seconds): what an admin call may have waited behind.
    const passes = {};
    for (const m of metrics.matchAll(/^s4_worker_pass_seconds_(count|sum)\{role="(\w+)",trigger="(\w+)"\} ([\d.e+-]+)$/gm)) {
      const k = `${m[2]}/${m[3]}`;
      passes[k] ??= { passes: 0, seconds: 0 };
      if (m[1] === 'count') passes[k].passes = Number(m[4]);
      else passes[k].seconds = +Number(m[4]).toFixed(1);
    }
    return {
      ingest: ing,
      duringIngest: {
        readyzP99Ms: p(during.map((s) => s.ready), 0.99),
        queryP99Ms: p(during.map((s) => s.query), 0.99),
        queryMedianMs: p(during.map((s) => s.query), 0.5),
        queryP90Ms: p(during.map((s) => s.query), 0.9),
        readyzMaxMs: p(during.map((s) => s.ready), 1),
        healthzP99Ms: p(during.map((s) => s.live), 0.99),
        healthzMedianMs: p(during.map((s) => s.live), 0.5),
        probes: during.length,
        eventLoopDelayMs: ingestLoop,
      },
      finalFlush: { seconds: +flushS.toFixed(1), readyzP99Ms: p(flushProbe.map((s) => s.ready), 0.99), queryP99Ms: p(flushProbe.map((s) => s.query), 0.99), probes: flushProbe.length, eventLoopDelayMs: flushLoop },
      compact: { seconds: +compactS.toFixed(1), readyzP99Ms: p(compactProbe.map((s) => s.ready), 0.99), queryP99Ms: p(compactProbe.map((s) => s.query), 0.99), stats: compact },
      rollupSeconds: +rollupS.toFixed(1),
      periodicFlushes: { passes: Number(flushPasses ?? NaN), seconds: Number(Number(flushSum ?? NaN).toFixed(1)) },
      workerPasses: passes,
      atRest: {
        segmentBytes: seg.bytes,
        segmentObjects: seg.files,
        rollupBytes: rollup.bytes,
        catalogAndIndexBytes: cat.bytes,
        notYetDeletedBytes: leftBehind,
        segmentBytesPerSample: +(seg.bytes / ing.samples).toFixed(3),
        rollupBytesPerSample: +(rollup.bytes / ing.samples).toFixed(3),
        bytesPerSampleWithRollups: +((seg.bytes + rollup.bytes) / ing.samples).toFixed(3),
      },
      peakRssMB: Math.round(Math.max(hwm, ing.peakRssDuringIngestMB * 2 ** 20) / 2 ** 20),
      redisPeakRssMB: redisHwm ? Math.round(redisHwm / 2 ** 20) : undefined,
      redisDuringIngest: redis ?? undefined,
      tagQuery: tag,
      singleSeriesQueryMs: one.ms,
    };
  } finally {
    await stop(child);
  }
}

/**
 * Redis while S4 ingests (redis+s3 mode): peak `used_memory` (INFO memory, sampled every second)
 * per active series, and the server's CPU per sample (user + system from /proc); null without
 * the pid file and URL run.sh exports.
 */
async function watchRedis() {
  if (!env.BENCH_REDIS_PIDFILE || !env.S4_REDIS_URL) return null;
  const pid = Number(readFileSync(env.BENCH_REDIS_PIDFILE, 'utf8').trim());
  const { Redis } = await import('ioredis');
  const client = new Redis(env.S4_REDIS_URL, { commandTimeout: 5_000, maxRetriesPerRequest: 1 });
  let peak = 0;
  const sample = async () => {
    const info = await client.info('memory').catch(() => '');
    peak = Math.max(peak, Number(/used_memory:(\d+)/.exec(info)?.[1] ?? 0));
  };
  await sample();
  const timer = setInterval(() => void sample(), 1000);
  const cpu0 = cpuMs(pid);
  return {
    async stop(samples) {
      clearInterval(timer);
      await sample();
      const cpu1 = cpuMs(pid);
      client.disconnect();
      const active = K.metrics * K.hosts;
      return {
        peakUsedMemoryMB: Math.round(peak / 2 ** 20),
        usedMemoryBytesPerActiveSeries: Math.round(peak / active),
        cpuUsPerSample: cpu0 && cpu1 ? +(((cpu1.process - cpu0.process) * 1000) / samples).toFixed(2) : null,
      };
    },
  };
}

/** 1 % of one metric's series (hosts whose number ends in 00), over the whole hour. */
async function tagQuery(base, target) {
  const re = 'host-[0-9]*00';
  const url =
    target === 's4'
      ? `${base}/v1/query?${new URLSearchParams({ metric: 'node_m0', match: `host=~${re}`, from: String(start0), to: String(end), format: 'json' })}`
      : `${base}/api/v1/export?${new URLSearchParams({ 'match[]': `node_m0{host=~"${re}"}`, start: String(start0 / 1000), end: String((end - 1) / 1000) })}`;
  const r = await timedQuery(url, K.repeats);
  const series = target === 's4' ? JSON.parse(r.body.toString()).series.length : r.body.toString().split('\n').filter(Boolean).length;
  return { medianMs: r.ms, firstMs: r.first, series, bytes: r.bytes };
}

async function runVM() {
  const dataDir = join(WORK, 'card-vm');
  rmSync(dataDir, { recursive: true, force: true });
  const bin = env.BENCH_VM_BIN || 'victoria-metrics';
  const child = start(bin, [`-httpListenAddr=127.0.0.1:${K.vmPort}`, `-storageDataPath=${dataDir}`, '-retentionPeriod=100y', '-search.disableCache', '-loggerLevel=ERROR', '-search.maxUniqueTimeseries=100000000'], { env: childEnv({}), log: join(WORK, 'card-vm.log') });
  const base = `http://127.0.0.1:${K.vmPort}`;
  try {
    await Promise.race([waitHttp(`${base}/health`, 30_000), child.exitedPromise.then((x) => Promise.reject(new Error(`VictoriaMetrics exited during start: ${JSON.stringify(x)}`)))]);
    const single = `/api/v1/export?${new URLSearchParams({ 'match[]': `node_m0{host="${hostName(K.hosts - 1)}"}`, start: String(start0 / 1000), end: String((end - 1) / 1000) })}`;
    log('VictoriaMetrics: ingesting');
    const pr = probe(base, single, false);
    const ing = await ingest(base, 'vm', '/api/v1/import/prometheus', 'text/plain', child.pid);
    const during = await pr.stop();
    log(`VictoriaMetrics: ${JSON.stringify(ing)}`);
    await ok(`${base}/internal/force_flush`, { agent: http });
    const tm = performance.now();
    await ok(`${base}/internal/force_merge`, { agent: http, timeoutMs: 1_800_000 });
    let last = -1;
    for (let stable = 0; stable < 3 && performance.now() - tm < 300_000; ) {
      await new Promise((r) => setTimeout(r, 1000));
      const b = dirBytes(dataDir).bytes;
      stable = b === last ? stable + 1 : 0;
      last = b;
    }
    const mergeS = (performance.now() - tm) / 1000;
    const disk = dirBytes(dataDir);
    const tag = await tagQuery(base, 'vm');
    const one = await timedQuery(`${base}${single}`, K.repeats);
    return {
      ingest: ing,
      duringIngest: { readyzP99Ms: p(during.map((s) => s.ready), 0.99), queryP99Ms: p(during.map((s) => s.query), 0.99), probes: during.length },
      mergeSeconds: +mergeS.toFixed(1),
      atRest: { bytes: disk.bytes, bytesPerSample: +(disk.bytes / ing.samples).toFixed(3) },
      peakRssMB: Math.round((memory(child.pid)?.hwm ?? 0) / 2 ** 20),
      tagQuery: tag,
      singleSeriesQueryMs: one.ms,
    };
  } finally {
    await stop(child);
  }
}

function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}

// ---------------------------------------------------------------- main
mkdirSync(WORK, { recursive: true });
const meta = {
  date: new Date().toISOString(),
  commit: git(['rev-parse', '--short', 'HEAD']),
  machine: machine(),
  command: env.BENCH_COMMAND || 'npm run bench -- cardinality',
  knobs: K,
  workload: { activeSeries: K.metrics * K.hosts, seriesTotal, rounds, samples: rounds * K.metrics * K.hosts, from: new Date(start0).toISOString(), to: new Date(end).toISOString(), churnRound, bodySeries, bodiesPerRound: Math.ceil(K.hosts / hostsPerBody), seriesCacheEntries },
  vm: { version: env.BENCH_VM_VERSION || 'unknown' },
};
log(JSON.stringify(meta));
const results = { meta, s4: {}, vm: null, ratios: {} };
for (const mode of K.modes) results.s4[mode] = await runS4(mode);
results.vm = await runVM();
for (const [mode, s] of Object.entries(results.s4)) {
  const v = results.vm;
  results.ratios[mode] = {
    sustainedIngest: +(s.ingest.samplesPerSec / v.ingest.samplesPerSec).toFixed(2),
    bytesPerSampleWithRollups: +(s.atRest.bytesPerSampleWithRollups / v.atRest.bytesPerSample).toFixed(2),
    segmentBytesPerSample: +(s.atRest.segmentBytesPerSample / v.atRest.bytesPerSample).toFixed(2),
    peakMemory: +((s.peakRssMB + (s.redisPeakRssMB ?? 0)) / v.peakRssMB).toFixed(2),
    tagQuery1pct: +(s.tagQuery.medianMs / v.tagQuery.medianMs).toFixed(2),
  };
}
const out = JSON.stringify(results, null, 1);
console.log(out);
if (K.writeDoc) {
  mkdirSync(join(ROOT, 'docs/bench-results'), { recursive: true });
  writeFileSync(join(ROOT, 'docs/bench-results/cardinality-latest.json'), `${out}\n`);
}
process.exit(0);
