// Single-series queries of an S4 on Redis + S3 whose hot tier holds many series of the metric
// (issue 12): BENCH_HOSTS (2,000) hosts × 20 metrics written as scrape rounds (one request each,
// 10 s apart in data time) over the BENCH_MINUTES (30) before now. Then BENCH_QUERIES (50) queries of
// one series of node_m0, one at a time: wall time, and CPU per query of S4 and of Redis (/proc, INFO
// cpu). Nothing writes meanwhile. S4 runs with its defaults (periodic flush and rollups on: data of an
// hour that closed more than S4_FLUSH_GRACE_MS ago goes to S3 as it would for a user);
// BENCH_WORKERS=off parks them, so every sample stays hot and the probe times the hot scan alone.
// Usage (a Redis and an S3 of your own, e.g. scripts/services/*.sh with your ports):
//   S4_REDIS_URL=... S4_S3_ENDPOINT=... AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... \
//   BENCH_S4_PORT=18821 node scripts/bench/redis-query.mjs [repo root of the build to run, default this one]
// BENCH_S4_NODE_ARGS: extra node options for the S4 process (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { start, stop } from './lib/proc.mjs';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { median, percentile } from './lib/stats.mjs';

const env = process.env;
const root = process.argv[2] ?? new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const HOSTS = Number(env.BENCH_HOSTS ?? 2_000);
const MINUTES = Number(env.BENCH_MINUTES ?? 30);
const QUERIES = Number(env.BENCH_QUERIES ?? 50);
const port = Number(env.BENCH_S4_PORT ?? 18821);
const base = `http://127.0.0.1:${port}`;
const http = agent(4);
const rounds = (MINUTES * 60) / 10;
const from = Math.floor(Date.now() / 10_000) * 10_000 - rounds * 10_000;
const workersOff = env.BENCH_WORKERS === 'off';
const ns = `rq${Date.now().toString(36)}`;

/** utime + stime of a process in ms (USER_HZ = 100). */
const cpuMs = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
};
const redis = new Redis(env.S4_REDIS_URL);
const redisCpuMs = async () => {
  const info = await redis.info('cpu');
  return (Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1])) * 1000;
};

const dataDir = mkdtempSync('/tmp/redis-query-');
const childEnv = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('S4_') && k !== 'NODE_OPTIONS'));
const child = start(process.execPath, [...(env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean), join(root, 'apps/api/dist/main.js')], {
  env: {
    ...childEnv,
    S4_HOST: '127.0.0.1',
    S4_PORT: String(port),
    S4_LOG_LEVEL: 'warn',
    S4_NAMESPACE: ns,
    S4_DATA_DIR: dataDir,
    S4_REDIS_URL: env.S4_REDIS_URL,
    S4_S3_BUCKET: `rq-${Date.now().toString(36)}`,
    S4_S3_ENDPOINT: env.S4_S3_ENDPOINT,
    S4_S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: env.AWS_REGION || 'us-east-1',
    ...(workersOff ? { S4_FLUSH_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000' } : {}),
    S4_MAX_SAMPLES_PER_REQUEST: '1000000',
    S4_MAX_BODY_BYTES: String(64 * 2 ** 20),
  },
  log: join(dataDir, 's4.log'),
});
try {
  await Promise.race([waitHttp(`${base}/readyz`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited: ${JSON.stringify(x)} (log ${dataDir}/s4.log)`)))]);
  const t0 = performance.now();
  for (let r = 0; r < rounds; r++) {
    const parts = [];
    for (let h = 0; h < HOSTS; h++) for (let m = 0; m < 20; m++) parts.push(`{"metric":"node_m${m}","tags":{"host":"host-${h}","dc":"dc-${h % 8}"},"ts":[${from + r * 10_000}],"fields":{"value":[${(h + m + r) % 1000}.25]}}`);
    await ok(`${base}/v1/write`, { method: 'POST', body: Buffer.from(`{"series":[${parts.join(',')}]}`), headers: { 'content-type': 'application/json' }, agent: http, timeoutMs: 600_000 });
  }
  const info = await redis.info('memory');
  console.log(`${root} (${workersOff ? 'workers off' : 'S4 defaults'}): ${HOSTS * 20} series × ${rounds} samples written in ${((performance.now() - t0) / 1000).toFixed(0)} s; Redis used_memory ${(Number(/used_memory:(\d+)/.exec(info)[1]) / 2 ** 20).toFixed(0)} MiB`);
  const url = `${base}/v1/query?metric=node_m0&tag=host:host-${HOSTS - 1}&from=${from}&to=${from + 3_600_000}`;
  const check = JSON.parse((await ok(url, { agent: http })).body.toString());
  const ms = [];
  const c0 = cpuMs(child.pid);
  const r0 = await redisCpuMs();
  for (let i = 0; i < QUERIES; i++) {
    const a = performance.now();
    const res = await request(url, { agent: http, timeoutMs: 60_000 });
    if (res.status !== 200) throw new Error(`query: ${res.status}`);
    ms.push(performance.now() - a);
  }
  const r1 = await redisCpuMs();
  const c1 = cpuMs(child.pid);
  ms.sort((a, b) => a - b);
  console.log(
    `single-series query (${JSON.stringify(check).length} B answer): wall p50 ${median(ms).toFixed(1)} ms, p99 ${percentile(ms, 99).toFixed(1)} ms; CPU per query S4 ${((c1 - c0) / QUERIES).toFixed(1)} ms, Redis ${((r1 - r0) / QUERIES).toFixed(1)} ms`,
  );
} finally {
  await stop(child);
  // This probe's keys only (its own namespace).
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `s4:{${ns}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await redis.del(...keys);
  } while (cursor !== '0');
  redis.disconnect();
  rmSync(dataDir, { recursive: true, force: true });
}
