// The cardinality bench's 1 % tag query (node_m0, host=~host-[0-9]*00, over the data's range) in
// Redis + S3 mode, against an S4 server started on the Redis and S3 that a cardinality run left
// (BENCH_MODES=redis+s3: its data stays under $BENCH_WORK/services; start them again with the same
// S4_SERVICES_DIR and ports). Modes as index-tagquery.mjs: `fresh` (the first query of a new
// process) and `warmed` (after rounds of a single-series query and a label listing, as the bench's
// probes ran during the ingest), then the warm median.
// S4 reaches S3 through a counting proxy of this script: per query, the S3 requests by kind (catalog,
// day list, series index, segment, rollup), their summed and overlapped ("busy") ms, and for the
// first query the timeline. Redis calls per query from INFO commandstats (its own calls excluded).
// Usage (after `npm run build`, with S4_REDIS_URL, S4_S3_ENDPOINT and AWS_* exported as the service
// scripts print them):
//   TQ_S3_DATA=$BENCH_WORK/services/s3/data node scripts/bench/index-tagredis.mjs
//   TQ_BUILDS=/work/main,. (alternated run by run) TQ_RUNS (3) TQ_WARM (10) TQ_MODES (warmed,fresh)
//   TQ_WARMUPS (20) TQ_PAUSE_MS (6000) TQ_PORT (18680) TQ_PROXY_PORT (S3 port + 1) TQ_TIMELINE (1)
//   TQ_PROF=DIR (--cpu-prof of the server into DIR)
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { join, resolve } from 'node:path';
import { stop } from './lib/proc.mjs';
import { agent, request } from './lib/http.mjs';
import { median } from './lib/stats.mjs';
import { benchQueries, cpuMs, startProbed } from './lib/tag-query.mjs';

const env = process.env;
const here = new URL('../../', import.meta.url).pathname;
const builds = (env.TQ_BUILDS ?? env.BUILD ?? here).split(',').filter(Boolean).map((b) => resolve(b));
const runs = Number(env.TQ_RUNS ?? 3);
const warmN = Number(env.TQ_WARM ?? 10);
const modes = (env.TQ_MODES ?? 'warmed,fresh').split(',');
const warmRounds = Number(env.TQ_WARMUPS ?? 20);
const pauseMs = Number(env.TQ_PAUSE_MS ?? 6000);
const port = Number(env.TQ_PORT ?? 18680);
const s3 = new URL(env.S4_S3_ENDPOINT ?? 'http://127.0.0.1:9812');
const proxyPort = Number(env.TQ_PROXY_PORT ?? Number(s3.port) + 1);
const redis = new URL(env.S4_REDIS_URL ?? 'redis://127.0.0.1:6812');
const base = `http://127.0.0.1:${port}`;
const client = agent(4);
const work = `/tmp/tagredis-probe-${process.pid}`;

const { decodeCatalog } = await import(join(builds[0], 'libs/format/dist/index.js'));
const { from, to, tagUrl, warmups } = benchQueries(base, join(env.TQ_S3_DATA ?? '/tmp/bench-tagredis/services/s3/data', 's4-cardinality/v1/bench/cat'), decodeCatalog);

// The counting proxy: requests pass verbatim (the signature covers the Host header, kept as sent).
const upstream = new http.Agent({ keepAlive: true, maxSockets: 256 });
let log = [];
const proxy = http.createServer((req, res) => {
  const t0 = performance.now();
  const up = http.request({ host: s3.hostname, port: s3.port, method: req.method, path: req.url, headers: req.headers, agent: upstream }, (r) => {
    res.writeHead(r.statusCode, r.headers);
    let bytes = 0;
    r.on('data', (c) => {
      bytes += c.length;
      res.write(c);
    });
    r.on('end', () => {
      res.end();
      log.push({ t0, t1: performance.now(), method: req.method, path: req.url.split('?')[0], range: req.headers.range ?? '', status: r.statusCode, bytes });
    });
  });
  up.on('error', (e) => res.destroy(e));
  req.pipe(up);
});
await new Promise((r) => proxy.listen(proxyPort, '127.0.0.1', r));

function kind(path) {
  if (path.endsWith('.s4idx')) return 'index';
  if (path.endsWith('.days')) return 'days';
  if (path.endsWith('.s4cat')) return 'catalog';
  if (path.includes('/rollup/')) return 'rollup';
  return 'segment';
}

function redisCalls() {
  const out = execFileSync('redis-cli', ['-h', redis.hostname, '-p', redis.port, 'INFO', 'commandstats'], { encoding: 'utf8' });
  const m = new Map();
  for (const line of out.split('\n')) {
    const x = /^cmdstat_([^:]+):calls=(\d+)/.exec(line);
    if (x) m.set(x[1], Number(x[2]));
  }
  return m;
}

function serverEnv() {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && k !== 'NODE_OPTIONS') e[k] = v;
  // As the cardinality bench starts S4 in Redis + S3 mode (cardinality.mjs, s4Env), S3 through the proxy.
  return {
    ...e,
    S4_HOST: '127.0.0.1',
    S4_PORT: String(port),
    S4_LOG_LEVEL: 'warn',
    S4_NAMESPACE: 'bench',
    S4_DATA_DIR: join(work, 'data'),
    S4_MAX_SAMPLES_PER_REQUEST: '1000000',
    S4_MAX_BODY_BYTES: String(64 * 2 ** 20),
    S4_SERIES_CACHE_ENTRIES: '65536',
    S4_COMPACT_SETTLE_MS: '0',
    S4_REQUEST_TIMEOUT_MS: '1800000',
    S4_REDIS_URL: env.S4_REDIS_URL,
    S4_S3_BUCKET: 's4-cardinality',
    S4_S3_ENDPOINT: `http://127.0.0.1:${proxyPort}`,
    S4_S3_FORCE_PATH_STYLE: 'true',
  };
}

async function timed(url, pid, withIo = false) {
  const r0 = withIo ? redisCalls() : null;
  log = [];
  const c = cpuMs(pid);
  const t0 = Number(process.hrtime.bigint() / 1000n);
  const a = performance.now();
  const r = await request(url, { agent: client });
  const b = performance.now();
  const t1 = Number(process.hrtime.bigint() / 1000n);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  const out = { wall: b - a, cpu: cpuMs(pid) - c, body: r.body, t0, t1 };
  if (withIo) {
    const r1 = redisCalls();
    const calls = {};
    for (const [k, v] of r1) if (k !== 'info' && v - (r0.get(k) ?? 0) > 0) calls[k] = v - (r0.get(k) ?? 0);
    const reqs = log.filter((x) => x.t0 >= a && x.t1 <= b);
    const byKind = {};
    for (const x of reqs) {
      const k = byKind[kind(x.path)] ?? (byKind[kind(x.path)] = { n: 0, ms: 0, bytes: 0 });
      k.n++;
      k.ms += x.t1 - x.t0;
      k.bytes += x.bytes;
    }
    for (const k of Object.values(byKind)) k.ms = Math.round(k.ms);
    // Busy: wall ms with at least one S3 request in flight.
    let busy = 0;
    let end = -Infinity;
    for (const x of [...reqs].sort((p, q) => p.t0 - q.t0)) {
      if (x.t1 <= end) continue;
      busy += x.t1 - Math.max(x.t0, end);
      end = x.t1;
    }
    out.io = { s3: reqs.length, byKind, busyMs: Math.round(busy), redis: calls };
    out.timeline = reqs.map((x) => `${(x.t0 - a).toFixed(1).padStart(7)} → ${(x.t1 - a).toFixed(1).padStart(7)} ms  ${x.method} ${kind(x.path).padEnd(7)} ${x.path.replace(/^.*\/v1\/bench\//, '')} ${x.range} ${x.status} ${x.bytes} B`);
  }
  return out;
}

async function once(build, mode) {
  rmSync(join(work, 'data'), { recursive: true, force: true });
  mkdirSync(join(work, 'data'), { recursive: true });
  const child = await startProbed({ build, env: serverEnv(), log: join(work, 'server.log'), base, warmed: mode === 'warmed', warmups, rounds: warmRounds, pauseMs, timed });
  try {
    const first = await timed(tagUrl, child.pid, true);
    const warm = [];
    for (let i = 0; i < warmN; i++) warm.push(await timed(tagUrl, child.pid, i === warmN - 1));
    const series = JSON.parse(first.body.toString()).series;
    return { pid: child.pid, first, warm, lastWarm: warm.at(-1), series: series.length, points: series.reduce((s, x) => s + x.ts.length, 0), body: first.body };
  } finally {
    await stop(child);
  }
}

mkdirSync(work, { recursive: true });
const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results = new Map();
let answer = null;
for (let run = 0; run < runs; run++)
  for (const mode of modes)
    for (const build of builds) {
      const r = await once(build, mode);
      const k = `${build}|${mode}`;
      if (!results.has(k)) results.set(k, { firstWall: [], firstCpu: [], warmWall: [], warmCpu: [], io: [] });
      const x = results.get(k);
      x.firstWall.push(r.first.wall);
      x.firstCpu.push(r.first.cpu);
      x.warmWall.push(median(r.warm.map((w) => w.wall)));
      x.warmCpu.push(median(r.warm.map((w) => w.cpu)));
      x.io.push(r.first.io);
      if (answer === null) answer = r.body;
      else if (!answer.equals(r.body)) throw new Error(`${k}: the answer differs from the first run's`);
      console.error(`[tagredis] ${k} run ${run}: first ${r.first.wall.toFixed(1)} ms (cpu ${r.first.cpu.toFixed(1)}), warm median ${median(r.warm.map((w) => w.wall)).toFixed(1)} ms (cpu ${median(r.warm.map((w) => w.cpu)).toFixed(1)}); ${r.series} series, ${r.points} points`);
      console.error(`[tagredis]   first: ${JSON.stringify(r.first.io)} (window of a --cpu-prof profile, µs: ${r.first.t0} ${r.first.t1}, pid ${r.pid})`);
      console.error(`[tagredis]   warm:  ${JSON.stringify(r.lastWarm.io)}`);
      if (env.TQ_TIMELINE !== '0' && run === 0) console.error(`[tagredis]   first query's S3 requests:\n    ${r.first.timeline.join('\n    ')}`);
    }
const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const r1 = (v) => Math.round(v * 10) / 10;
const out = [];
for (const [k, x] of results) {
  const [build, mode] = k.split('|');
  out.push({ build, mode, runs: x.firstWall.length, firstWallMedianMs: r1(median(x.firstWall)), firstWallMs: x.firstWall.map(r1), firstCpuMedianMs: r1(median(x.firstCpu)), warmWallMedianMs: r1(median(x.warmWall)), warmCpuMedianMs: r1(median(x.warmCpu)) });
}
console.log(JSON.stringify({ from, to, bytes: answer.length, load: { before: load0, after: load1 }, results: out }, null, 1));
proxy.close();
rmSync(work, { recursive: true, force: true });
process.exit(0);
