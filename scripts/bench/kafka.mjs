// Kafka ingest benchmark (issue 14): S4 processes as users run them (Redis + S3, defaults on:
// periodic flush, rollups, compaction), ingesting directly (S4_INGEST=direct) and through Kafka
// (S4_INGEST=kafka), measured in the same run, back to back:
//   1. ingest: BENCH_SAMPLES samples in batches of BENCH_BATCH, BENCH_CONCURRENCY requests in
//      flight, into one S4_ROLE=all process; samples/s until every request is acknowledged and,
//      for Kafka, until every sample is in the hot tier (lag 0);
//   2. produce-to-queryable: BENCH_PROBES single-sample writes, each polled with /v1/latest
//      until it is visible; p50/p99 of write start → visible;
//   3. recovery: BENCH_RECOVERY_SAMPLES samples produced with no ingest worker running (an
//      S4_ROLE=api process), then one S4_ROLE=ingest worker started: time until its /readyz is
//      ready (it joined the group) and until the lag is 0.
// Usage: npm run build && out=$(scripts/services/redis.sh start) && eval "$out" && out=$(scripts/services/s3.sh start) && eval "$out" \
//          && out=$(scripts/services/kafka.sh start) && eval "$out" && node scripts/bench/kafka.mjs
//   env: BENCH_SAMPLES (1000000) BENCH_BATCH (10000) BENCH_CONCURRENCY (4) BENCH_PROBES (200)
//        BENCH_RECOVERY_SAMPLES (10000000) BENCH_SHARDS (16) BENCH_WRITE_DOC (1: docs/bench-results/kafka-latest.json)
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { S3ObjectStore } from '../../libs/storage/dist/index.js';
import { ok, request, waitHttp, mapLimit } from './lib/http.mjs';
import { machine, start, stop } from './lib/proc.mjs';
import { median, percentile } from './lib/stats.mjs';

const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 1_000_000);
const BATCH = Number(process.env.BENCH_BATCH ?? 10_000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 4);
const PROBES = Number(process.env.BENCH_PROBES ?? 200);
const RECOVERY = Number(process.env.BENCH_RECOVERY_SAMPLES ?? 10_000_000);
const SHARDS = Number(process.env.BENCH_SHARDS ?? 16);
const SERIES = 1000;
const H = 3_600_000;
const root = new URL('../../', import.meta.url).pathname;
const main = join(root, 'apps/api/dist/main.js');
const work = mkdtempSync(join(tmpdir(), 's4-kafka-bench-'));
const log = (m) => console.error(`[kafka bench] ${m}`);
for (const v of ['S4_REDIS_URL', 'S4_S3_ENDPOINT', 'S4_KAFKA_BROKERS']) if (!process.env[v]) throw new Error(`${v} is not set: start scripts/services/{redis,s3,kafka}.sh and eval their output`);

let port = 18700;
async function server(env, role, waitReady = true) {
  const p = port++;
  const child = start(process.execPath, [main], { env: { PATH: process.env.PATH, ...env, S4_ROLE: role, S4_PORT: String(p), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn' }, log: join(work, `s4-${role}-${p}.log`) });
  const url = `http://127.0.0.1:${p}`;
  await waitHttp(`${url}${waitReady ? '/readyz' : '/healthz'}`, 120_000);
  return { child, url };
}

async function environment(ingest) {
  const bucket = `s4-kbench-${randomUUID().slice(0, 12)}`;
  const store = new S3ObjectStore({ bucket, prefix: '', region: process.env.AWS_REGION ?? 'us-east-1', endpoint: process.env.S4_S3_ENDPOINT, forcePathStyle: true, maxSockets: 4 });
  await store.ensureBucket();
  await store.close();
  const ns = `kb${randomUUID().replaceAll('-', '').slice(0, 10)}`;
  return {
    S4_DATA_DIR: join(work, ns),
    S4_NAMESPACE: ns,
    S4_SHARDS: String(SHARDS),
    S4_REDIS_URL: process.env.S4_REDIS_URL,
    S4_S3_BUCKET: bucket,
    S4_S3_ENDPOINT: process.env.S4_S3_ENDPOINT,
    S4_S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: process.env.AWS_REGION ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
    S4_INGEST: ingest,
    ...(ingest === 'kafka'
      ? { S4_KAFKA_BROKERS: process.env.S4_KAFKA_BROKERS, S4_KAFKA_TOPIC_PREFIX: ns, S4_KAFKA_REPLICATION: '1', S4_INGEST_LAG_INTERVAL_MS: '250', S4_INGEST_READY_LAG: '0', KAFKAJS_NO_PARTITIONER_WARNING: '1' }
      : {}),
  };
}

/** Batch i of a run: SERIES series, one sample per second each, the hours before `base`. */
function body(i, base, metric) {
  const per = BATCH / SERIES;
  const samples = [];
  for (let s = 0; s < SERIES; s++) for (let k = 0; k < per; k++) samples.push({ metric, tags: { host: `h${s}` }, ts: base - (i * per + k + 1) * 1000, fields: { value: (s * 7 + k) % 1000 } });
  return JSON.stringify({ samples });
}

async function write(url, batches, base, metric) {
  await mapLimit(Array.from({ length: batches }, (_, i) => i), CONCURRENCY, async (i) => {
    for (;;) {
      const r = await request(`${url}/v1/write`, { body: body(i, base, metric), headers: { 'content-type': 'application/json' } });
      if (r.status === 202 || r.status === 204) return;
      if (r.status !== 503) throw new Error(`write ${r.status}: ${r.body.toString().slice(0, 300)}`);
      await new Promise((res) => setTimeout(res, 200));
    }
  });
}

async function lagTotal(url) {
  const s = JSON.parse((await ok(`${url}/v1/admin/shards`)).body.toString());
  return s.shards.reduce((n, x) => n + (x.lag ?? Infinity), 0);
}

async function drained(url) {
  while ((await lagTotal(url)) > 0) await new Promise((r) => setTimeout(r, 50));
}

async function ingestRun(mode) {
  const env = await environment(mode);
  const s4 = await server(env, 'all');
  const base = Math.floor(Date.now() / H) * H;
  const batches = Math.ceil(SAMPLES / BATCH);
  const t0 = performance.now();
  await write(s4.url, batches, base, 'bench.ingest');
  const acked = (performance.now() - t0) / 1000;
  if (mode === 'kafka') await drained(s4.url);
  const stored = (performance.now() - t0) / 1000;
  // Produce to queryable: one new sample at a time, polled until /v1/latest shows it.
  const lat = [];
  for (let i = 0; i < PROBES; i++) {
    const ts = Date.now() - 1000;
    const tags = { probe: `p${i % 50}` };
    const t = performance.now();
    const w = await request(`${s4.url}/v1/write`, { body: JSON.stringify({ samples: [{ metric: 'bench.probe', tags, ts, fields: { value: i } }] }), headers: { 'content-type': 'application/json' } });
    if (w.status !== 202 && w.status !== 204) throw new Error(`probe write ${w.status}`);
    for (;;) {
      const r = await ok(`${s4.url}/v1/latest?metric=bench.probe&tag=probe:${tags.probe}&from=${ts}&to=${ts + 1}`);
      const series = JSON.parse(r.body.toString()).series;
      if (series.length > 0 && series[0].fields.value[0] === i) break;
      await new Promise((res) => setTimeout(res, 2));
    }
    lat.push(performance.now() - t);
  }
  lat.sort((a, b) => a - b);
  await stop(s4.child);
  return { mode, samples: batches * BATCH, ackedSeconds: acked, storedSeconds: stored, ackedPerSecond: (batches * BATCH) / acked, storedPerSecond: (batches * BATCH) / stored, visibleMs: { p50: percentile(lat, 50), p99: percentile(lat, 99), median: median(lat) } };
}

async function recoveryRun() {
  const env = await environment('kafka');
  const api = await server(env, 'api');
  const base = Math.floor(Date.now() / H) * H;
  const batches = Math.ceil(RECOVERY / BATCH);
  const p0 = performance.now();
  await write(api.url, batches, base, 'bench.recovery');
  const produceSeconds = (performance.now() - p0) / 1000;
  const lagBefore = await lagTotal(api.url);
  const t0 = performance.now();
  const worker = await server(env, 'ingest', false);
  await waitHttp(`${worker.url}/readyz`, 3_600_000);
  const readySeconds = (performance.now() - t0) / 1000;
  await drained(api.url);
  const drainedSeconds = (performance.now() - t0) / 1000;
  // Spot check: every sample of one series is there.
  const q = JSON.parse((await ok(`${api.url}/v1/query?metric=bench.recovery&tag=host:h7&from=${base - 10 * 24 * H}&to=${base}`)).body.toString());
  const expected = (batches * BATCH) / SERIES;
  const got = q.series[0]?.ts.length ?? 0;
  if (got !== expected) throw new Error(`recovery: series h7 has ${got} samples, expected ${expected}`);
  await stop(worker.child);
  await stop(api.child);
  return { samples: batches * BATCH, messages: lagBefore, produceSeconds, readySeconds, drainedSeconds, samplesPerSecond: (batches * BATCH) / drainedSeconds };
}

const results = { date: new Date().toISOString(), machine: machine(), config: { SAMPLES, BATCH, CONCURRENCY, PROBES, RECOVERY, SHARDS, SERIES }, runs: [] };
for (const mode of ['direct', 'kafka']) {
  log(`ingest ${mode}`);
  const r = await ingestRun(mode);
  log(JSON.stringify(r));
  results.runs.push(r);
}
if (RECOVERY > 0) {
  log(`recovery of ${RECOVERY} samples`);
  results.recovery = await recoveryRun();
  log(JSON.stringify(results.recovery));
}
console.log(JSON.stringify(results, null, 2));
if (process.env.BENCH_WRITE_DOC !== '0') writeFileSync(join(root, 'docs/bench-results/kafka-latest.json'), `${JSON.stringify(results, null, 2)}\n`);
