// The cardinality bench's 1 % tag query (node_m0, host=~host-[0-9]*00, over the data's range)
// against an S4 server started on a copy of a kept data dir: the first query in a fresh process
// (`fresh`: V8 has compiled none of the query path), the first after a warm-up of other query
// types (`warmed`: a single-series query and a label listing first, as in the bench, where the
// probes of the ingest ran such queries: code compiled, indexes loaded, the tag query's own index
// blocks and segment blocks not), then the warm median. Wall ms as the client sees it and the
// server's CPU ms (user + system from /proc, 10 ms ticks: summed over the runs it averages out).
// Usage (after `npm run build`; the data dir from BENCH_KEEP=1 npm run bench -- cardinality):
//   node scripts/bench/index-tagquery.mjs DATA_DIR            this checkout's build
//   BUILD=/work/main node scripts/bench/index-tagquery.mjs DATA_DIR   another build (a baseline)
//   TQ_RUNS (5: server starts per mode) TQ_WARM (20: warm repeats) TQ_MODES (fresh,warmed)
//   TQ_WARMUPS (50: rounds of the warm-up queries) TQ_PAUSE_MS (6000: idle after them)
//   TQ_PORT (18790) TQ_PROF=DIR (the server runs with --cpu-prof into DIR) TQ_BUILDS=A,B (alternate builds, run by run)
import { cpSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { stop } from './lib/proc.mjs';
import { agent, request } from './lib/http.mjs';
import { median } from './lib/stats.mjs';
import { benchQueries, cpuMs, startProbed } from './lib/tag-query.mjs';

const env = process.env;
const here = new URL('../../', import.meta.url).pathname;
const builds = (env.TQ_BUILDS ?? env.BUILD ?? here).split(',').filter(Boolean);
const src = process.argv[2] ?? '/tmp/bench-tagq/card-embedded';
const runs = Number(env.TQ_RUNS ?? 5);
const warmN = Number(env.TQ_WARM ?? 20);
const modes = (env.TQ_MODES ?? 'fresh,warmed').split(',');
const warmRounds = Number(env.TQ_WARMUPS ?? 50);
const pauseMs = Number(env.TQ_PAUSE_MS ?? 6000);
const port = Number(env.TQ_PORT ?? 18790);
const base = `http://127.0.0.1:${port}`;
const http = agent(4);
const work = `/tmp/tagq-probe-${process.pid}`;

const { decodeCatalog } = await import(join(builds[0], 'libs/format/dist/index.js'));
const { from, to, tagUrl, warmups } = benchQueries(base, join(src, 'objects/v1/bench/cat'), decodeCatalog);

/** ms the HTTP thread waited, runnable, for a CPU (schedstat's second field): what the machine's other load added. */
function waitMs(pid) {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[1]) / 1e6;
}

function serverEnv(dataDir) {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  // As the cardinality bench starts S4 (cardinality.mjs, s4Env).
  return { ...e, S4_HOST: '127.0.0.1', S4_PORT: String(port), S4_LOG_LEVEL: 'warn', S4_NAMESPACE: 'bench', S4_DATA_DIR: dataDir, S4_MAX_SAMPLES_PER_REQUEST: '1000000', S4_MAX_BODY_BYTES: String(64 * 2 ** 20), S4_SERIES_CACHE_ENTRIES: '65536', S4_COMPACT_SETTLE_MS: '0', S4_REQUEST_TIMEOUT_MS: '1800000' };
}

async function timed(url, pid) {
  const c = cpuMs(pid);
  const w = waitMs(pid);
  // The monotonic clock V8's profiles use (µs), to cut a profile to this request.
  const t0 = Number(process.hrtime.bigint() / 1000n);
  const a = performance.now();
  const r = await request(url, { agent: http });
  const wall = performance.now() - a;
  const t1 = Number(process.hrtime.bigint() / 1000n);
  if (r.status !== 200) throw new Error(`${url}: ${r.status} ${r.body.toString().slice(0, 300)}`);
  return { wall, cpu: cpuMs(pid) - c, runqueue: waitMs(pid) - w, body: r.body, t0, t1 };
}

/**
 * The functions of a .cpuprofile's samples in [t0, t1] (µs, the profile's clock): self and
 * inclusive ms, the top `n` of each.
 */
function profileWindow(file, t0, t1, n = 25) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((x) => [x.id, x]));
  const parent = new Map();
  for (const x of p.nodes) for (const c of x.children ?? []) parent.set(c, x.id);
  const name = (x) => {
    const cf = x.callFrame;
    const url = cf.url.replace(/^file:\/\/.*?\/(node_modules|apps|libs)\//, '$1/');
    return `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
  };
  const self = new Map();
  const total = new Map();
  let t = p.startTime;
  let sum = 0;
  for (let i = 0; i < p.samples.length; i++) {
    t += p.timeDeltas[i] ?? 0;
    if (t < t0 || t > t1) continue;
    const d = p.timeDeltas[i + 1] ?? 0;
    sum += d;
    let id = p.samples[i];
    const k = name(byId.get(id));
    self.set(k, (self.get(k) ?? 0) + d);
    const seen = new Set();
    for (; id !== undefined; id = parent.get(id)) {
      const kk = name(byId.get(id));
      if (seen.has(kk)) continue;
      seen.add(kk);
      total.set(kk, (total.get(kk) ?? 0) + d);
    }
  }
  const top = (m) => [...m].sort((a, b) => b[1] - a[1]).slice(0, n).map(([fn, us]) => `${(us / 1000).toFixed(1).padStart(7)} ms  ${fn}`);
  return { ms: +(sum / 1000).toFixed(1), self: top(self), inclusive: top(total) };
}

async function once(build, mode, run) {
  const dataDir = join(work, 'data');
  rmSync(dataDir, { recursive: true, force: true });
  cpSync(src, dataDir, { recursive: true });
  const child = await startProbed({ build, env: serverEnv(dataDir), log: join(work, 'server.log'), base, warmed: mode === 'warmed', warmups, rounds: warmRounds, pauseMs, timed });
  try {
    const first = await timed(tagUrl, child.pid);
    const warm = [];
    for (let i = 0; i < warmN; i++) warm.push(await timed(tagUrl, child.pid));
    const series = JSON.parse(first.body.toString()).series;
    if (env.TQ_PROF) {
      await stop(child);
      // Node names profiles CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile: the HTTP thread is
      // thread 0, the latest of them (the first is the process before it re-executed itself).
      const file = join(env.TQ_PROF, readdirSync(env.TQ_PROF).filter((f) => f.includes(`.${child.pid}.0.`)).sort().at(-1));
      const w = profileWindow(file, first.t0, first.t1, Number(env.TQ_PROF_TOP ?? 25));
      console.error(`[tagquery] profile of the first tag query (${w.ms} ms sampled on the main thread), self:\n  ${w.self.join('\n  ')}\ninclusive:\n  ${w.inclusive.join('\n  ')}`);
    }
    return { first, warm, series: series.length, points: series.reduce((a, s) => a + s.ts.length, 0), body: first.body };
  } finally {
    await stop(child);
  }
}

mkdirSync(work, { recursive: true });
const load0 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results = new Map(); // build|mode → { firstWall[], firstCpu[], warmWall[], warmCpu[] }
let answer = null;
for (let run = 0; run < runs; run++)
  for (const mode of modes)
    for (const build of builds) {
      const r = await once(build, mode, run);
      const k = `${build}|${mode}`;
      if (!results.has(k)) results.set(k, { firstWall: [], firstCpu: [], firstWait: [], warmWall: [], warmCpu: [] });
      const x = results.get(k);
      x.firstWall.push(r.first.wall);
      x.firstCpu.push(r.first.cpu);
      x.firstWait.push(r.first.runqueue);
      x.warmWall.push(median(r.warm.map((w) => w.wall)));
      x.warmCpu.push(median(r.warm.map((w) => w.cpu)));
      // Every build and mode must give the same answer, byte for byte.
      if (answer === null) answer = r.body;
      else if (!answer.equals(r.body)) throw new Error(`${k}: the answer differs from the first run's`);
      console.error(`[tagquery] ${k} run ${run}: first ${r.first.wall.toFixed(1)} ms (cpu ${r.first.cpu.toFixed(1)}, waited for a cpu ${r.first.runqueue.toFixed(1)}), warm median ${median(r.warm.map((w) => w.wall)).toFixed(1)} ms; ${r.series} series, ${r.points} points`);
    }
const load1 = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const r1 = (x) => Math.round(x * 10) / 10;
const out = [];
for (const [k, x] of results) {
  const [build, mode] = k.split('|');
  out.push({ build, mode, runs: x.firstWall.length, firstWallMedianMs: r1(median(x.firstWall)), firstWallMs: x.firstWall.map(r1), firstCpuMedianMs: r1(median(x.firstCpu)), firstCpuMs: x.firstCpu.map(r1), firstRunqueueMedianMs: r1(median(x.firstWait)), warmWallMedianMs: r1(median(x.warmWall)), warmCpuMedianMs: r1(median(x.warmCpu)) });
}
console.log(JSON.stringify({ data: src, from, to, bytes: answer.length, load: { before: load0, after: load1 }, results: out }, null, 1));
rmSync(work, { recursive: true, force: true });
process.exit(0);
