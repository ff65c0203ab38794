#!/usr/bin/env node
// Records ingest alone (issue 11): the records workload's write phase against one embedded S4 with
// its defaults, without PostgreSQL or the reads, plus what the full bench does not show — the
// server's CPU time per record, its RSS sampled every 250 ms through the load and the flush after
// it, and (optionally) a --cpu-prof of every thread. For comparing builds back to back:
//
//   npm run build --silent
//   BENCH_WORK=/tmp/bench-x BENCH_S4_PORT=18621 BENCH_MACHINES=300 BENCH_RECORD_MINUTES=20 \
//     node scripts/bench/records-ingest.mjs
//
// Knobs: BENCH_MACHINES (300) BENCH_RECORD_MINUTES (20) BENCH_BATCH_RECORDS (500)
//   BENCH_INGEST_CONCURRENCY (4) BENCH_S4_PORT (18621) BENCH_WORK (/tmp/s4-bench-ingest)
//   BENCH_CPU_PROF (0; 1 = --cpu-prof into $BENCH_WORK/prof) BENCH_S4_NODE_ARGS (extra node options)
//   BENCH_S4_MAIN (the server's entry, default apps/api/dist/main.js: point it at another build)
//   BENCH_S4_ENV (extra server environment, "K=V K2=V2")
//   BENCH_BODY (json; msgpack = the same batches as the SDK sends a write: its columnar wire, its Packr)
//   BENCH_MODE (embedded; redis+s3 = hot tier on the Redis of $S4_REDIS_URL, objects on the S3 server of
//     $S4_S3_ENDPOINT and AWS_* as exported by scripts/services/{redis,s3}.sh start; Redis is FLUSHALLed first,
//     and with BENCH_REDIS_PIDFILE its CPU time during the writes is reported beside the server's, and that of its
//     forks, the AOF rewrites, apart)
// Prints one JSON line of figures on stdout; progress on stderr. The encoded bodies are kept under
// $BENCH_WORK/records-ingest-data/<machines>x<minutes> and reused by the next run.
import { execFileSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, readFileSync, readSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HOUR } from './lib/dataset.mjs';
import { ok, waitHttp } from './lib/http.mjs';
import { dirBytes, machine, memory, start, stop } from './lib/proc.mjs';
import { forEachRecord, machineName, plan, sdkMsgpackBodies } from './lib/records.mjs';
import { percentile } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  machines: num('BENCH_MACHINES', 300),
  minutes: num('BENCH_RECORD_MINUTES', 20),
  batchRecords: num('BENCH_BATCH_RECORDS', 500),
  clients: num('BENCH_INGEST_CONCURRENCY', 4),
  port: num('BENCH_S4_PORT', 18621),
  mode: env.BENCH_MODE || 'embedded',
  body: env.BENCH_BODY || 'json',
};
if (K.body !== 'json' && K.body !== 'msgpack') throw new Error(`unknown BENCH_BODY ${K.body} (json, msgpack)`);
const WORK = env.BENCH_WORK || '/tmp/s4-bench-ingest';
const MAIN = resolve(env.BENCH_S4_MAIN || join(ROOT, 'apps/api/dist/main.js'));
const log = (...a) => console.error(`[ingest ${new Date().toISOString().slice(11, 19)}]`, ...a);

/** Request bodies on disk, made once per dataset size (the hour they end at moves with the clock). */
async function bodies() {
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const p = plan({ machines: K.machines, seconds: Math.round(K.minutes * 60), end });
  const dir = join(WORK, 'records-ingest-data', `${K.machines}x${K.minutes}x${K.batchRecords}-${K.body}-${end}`);
  const index = join(dir, 'index.json');
  if (existsSync(index)) return { p, dir, ...JSON.parse(readFileSync(index, 'utf8')) };
  rmSync(join(WORK, 'records-ingest-data'), { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const fd = openSync(join(dir, 'bodies'), 'w');
  const heads = Array.from({ length: p.machines }, (_, m) => `{"metric":"machine.record","tags":{"machine":"${machineName(m)}"},"ts":`);
  const batches = [];
  let parts = [];
  let off = 0;
  let jsonBytes = 0;
  const sdkBody = K.body === 'msgpack' ? await sdkMsgpackBodies() : null;
  const close = () => {
    if (!parts.length) return;
    const text = `{"samples":[${parts.join(',')}]}`;
    const b = sdkBody ? sdkBody(JSON.parse(text).samples) : Buffer.from(text);
    writeSync(fd, b);
    batches.push([off, b.length, parts.length]);
    off += b.length;
    parts = [];
  };
  forEachRecord(p, (m, ts, text) => {
    jsonBytes += Buffer.byteLength(text);
    parts.push(`${heads[m]}${ts},"fields":${text}}`);
    if (parts.length === K.batchRecords) close();
  });
  close();
  closeSync(fd);
  const meta = { batches, jsonBytes, records: p.records };
  writeFileSync(index, JSON.stringify(meta));
  return { p, dir, ...meta };
}

/** utime + stime of a process in ms (all its threads); with `children`, that of its children it waited for instead. */
function cpuMs(pid, children = false) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  const at = children ? 13 : 11;
  return ((Number(rest[at]) + Number(rest[at + 1])) * 1000) / 100; // USER_HZ = 100 on Linux
}

/** CPU ms per thread name (/proc/PID/task/TID: comm, utime + stime), threads of one name summed. */
function threadCpuMs(pid) {
  const out = {};
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      const name = readFileSync(`/proc/${pid}/task/${tid}/comm`, 'utf8').trim();
      out[name] = (out[name] ?? 0) + cpuMs(`${pid}/task/${tid}`);
    } catch {
      // the thread ended
    }
  }
  return out;
}

function loadavg() {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

async function main() {
  mkdirSync(WORK, { recursive: true });
  const data = await bodies();
  log(`dataset ${data.records} records, ${(data.jsonBytes / 1e6).toFixed(1)} MB JSON, ${data.batches.length} batches; load ${loadavg()}`);
  const dataDir = join(WORK, 's4-data');
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const prof = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'prof')}`] : [];
  if (prof.length) rmSync(join(WORK, 'prof'), { recursive: true, force: true });
  const childEnv = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') childEnv[k] = v;
  Object.assign(childEnv, { S4_HOST: '127.0.0.1', S4_PORT: String(K.port), S4_LOG_LEVEL: 'warn', S4_DATA_DIR: dataDir });
  let redisPid;
  if (K.mode === 'redis+s3') {
    for (const k of ['S4_REDIS_URL', 'S4_S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      if (!env[k]) throw new Error(`BENCH_MODE=redis+s3 needs ${k} (from scripts/services/{redis,s3}.sh start)`);
    const u = new URL(env.S4_REDIS_URL);
    execFileSync('redis-cli', ['-h', u.hostname, '-p', u.port || '6379', 'FLUSHALL']);
    const bucket = env.BENCH_S3_BUCKET || 's4-bench-ingest';
    Object.assign(childEnv, {
      S4_REDIS_URL: env.S4_REDIS_URL,
      S4_S3_BUCKET: bucket,
      S4_S3_ENDPOINT: env.S4_S3_ENDPOINT,
      S4_S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: env.AWS_REGION || 'us-east-1',
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
    });
    if (env.BENCH_REDIS_PIDFILE) redisPid = Number(readFileSync(env.BENCH_REDIS_PIDFILE, 'utf8').trim());
  } else if (K.mode !== 'embedded') throw new Error(`unknown BENCH_MODE ${K.mode} (embedded, redis+s3)`);
  for (const kv of (env.BENCH_S4_ENV ?? '').split(' ').filter(Boolean)) {
    const i = kv.indexOf('=');
    childEnv[kv.slice(0, i)] = kv.slice(i + 1);
  }
  const logf = join(WORK, 's4.log');
  const child = start(process.execPath, [...prof, ...(env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean), MAIN], { env: childEnv, log: logf });
  const url = `http://127.0.0.1:${K.port}`;
  try {
    await Promise.race([waitHttp(`${url}/readyz`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited during start ${JSON.stringify(x)}; see ${logf}`)))]);
    const rss = [];
    let phase = 'ingest';
    const peak = { ingest: 0, flush: 0 };
    const sampler = setInterval(() => {
      const m = memory(child.pid);
      if (!m) return;
      rss.push([Math.round(performance.now()), Math.round(m.rss / 2 ** 20)]);
      peak[phase] = Math.max(peak[phase], m.rss);
    }, 250);
    const cpu0 = cpuMs(child.pid);
    const threads0 = threadCpuMs(child.pid);
    const redisCpu0 = redisPid ? cpuMs(redisPid) : 0;
    const redisChildCpu0 = redisPid ? cpuMs(redisPid, true) : 0;
    const fd = openSync(join(data.dir, 'bodies'), 'r');
    const lat = new Float64Array(data.batches.length);
    let next = 0;
    const t0 = performance.now();
    await Promise.all(
      Array.from({ length: K.clients }, async () => {
        while (next < data.batches.length) {
          const i = next++;
          const [off, len] = data.batches[i];
          const b = Buffer.allocUnsafe(len);
          let got = 0;
          while (got < len) got += readSync(fd, b, got, len - got, off + got);
          const s = performance.now();
          await ok(`${url}/v1/write`, { method: 'POST', body: b, headers: { 'content-type': K.body === 'msgpack' ? 'application/msgpack' : 'application/json' } });
          lat[i] = performance.now() - s;
        }
      }),
    );
    const ingestMs = performance.now() - t0;
    closeSync(fd);
    const ingestCpu = cpuMs(child.pid) - cpu0;
    const threadsCpu = {};
    for (const [name, ms] of Object.entries(threadCpuMs(child.pid))) if (ms - (threads0[name] ?? 0) >= 10) threadsCpu[name] = Math.round(ms - (threads0[name] ?? 0));
    const redisCpu = redisPid ? cpuMs(redisPid) - redisCpu0 : NaN;
    // Redis' forks (AOF rewrites: with appendonly, one each time the file doubled) run beside it on the same cores.
    const redisChildCpu = redisPid ? cpuMs(redisPid, true) - redisChildCpu0 : NaN;
    // The periodic flusher's passes during the load (segment role), from /metrics.
    const metricsText = (await ok(`${url}/metrics`)).body.toString();
    const metric = (name) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metricsText)?.[1] ?? NaN);
    const periodic = { passes: metric('s4_flush_seconds_count'), seconds: +metric('s4_flush_seconds_sum').toFixed(1), samples: metric('s4_flush_samples_total') };
    const loadAfterIngest = loadavg();
    phase = 'flush';
    const t1 = performance.now();
    const flush = JSON.parse((await ok(`${url}/v1/admin/flush`, { method: 'POST' })).body.toString() || '{}');
    const flushMs = performance.now() - t1;
    clearInterval(sampler);
    const hwm = memory(child.pid)?.hwm ?? NaN;
    const sorted = lat.slice().sort();
    const out = {
      date: new Date().toISOString(),
      main: MAIN,
      nodeArgs: env.BENCH_S4_NODE_ARGS ?? '',
      s4Env: env.BENCH_S4_ENV ?? '',
      machine: machine(),
      knobs: K,
      records: data.records,
      recordsPerSec: Math.round(data.records / (ingestMs / 1000)),
      jsonMBPerSec: +(data.jsonBytes / 1e6 / (ingestMs / 1000)).toFixed(1),
      batchP50: +percentile(sorted, 50).toFixed(1),
      batchP99: +percentile(sorted, 99).toFixed(1),
      serverCpuMsDuringIngest: Math.round(ingestCpu),
      serverCpuUsPerRecord: +((ingestCpu * 1000) / data.records).toFixed(1),
      serverCpuMsByThread: threadsCpu,
      ...(redisPid
        ? {
            redisCpuMsDuringIngest: Math.round(redisCpu),
            redisCpuUsPerRecord: +((redisCpu * 1000) / data.records).toFixed(1),
            redisForksCpuUsPerRecord: +((redisChildCpu * 1000) / data.records).toFixed(1),
          }
        : {}),
      peakRssMiB: { ingest: Math.round(peak.ingest / 2 ** 20), flush: Math.round(peak.flush / 2 ** 20), vmHWM: Math.round(hwm / 2 ** 20) },
      periodicFlushDuringIngest: periodic,
      flushAfterMs: Math.round(flushMs),
      flush,
      objectsBytes: K.mode === 'embedded' ? dirBytes(join(dataDir, 'objects')).bytes : undefined,
      load: { afterIngest: loadAfterIngest, end: loadavg() },
    };
    writeFileSync(join(WORK, 'rss.json'), JSON.stringify(rss));
    console.log(JSON.stringify(out));
  } finally {
    await stop(child);
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
