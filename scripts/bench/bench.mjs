// S4 vs VictoriaMetrics benchmark (issues 2 and 6). Started by scripts/bench/run.sh, which builds
// S4, starts Redis + S3 (scripts/services) on the bench's own ports and passes their env lines.
// Everything here talks HTTP with one client (node:http + keep-alive agent, msgpackr, JSON.parse).
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Packr, Unpackr } from 'msgpackr';
import { HOUR, batches, countRange, generate } from './lib/dataset.mjs';
import { METRIC, s4Paths } from './lib/float-queries.mjs';
import { agent, mapLimit, ok, request, waitHttp } from './lib/http.mjs';
import { dirBytes, machine, memory, start, stop } from './lib/proc.mjs';
import { percentile, summary } from './lib/stats.mjs';
import { renderDoc } from './lib/report.mjs';
import { summarizeProfile } from './profile-summary.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  sensors: num('BENCH_SENSORS', 200),
  hours: num('BENCH_HOURS', 24),
  repeats: num('BENCH_REPEATS', 7),
  singleSeconds: num('BENCH_SINGLE_SECONDS', 20),
  singleClients: num('BENCH_SINGLE_CLIENTS', 50),
  batchSamples: num('BENCH_BATCH_SAMPLES', 100_000),
  ingestConcurrency: num('BENCH_INGEST_CONCURRENCY', 4),
  modes: (env.BENCH_MODES || 'embedded,redis+s3,embedded-fsync-never').split(',').map((s) => s.trim()).filter(Boolean),
  cpuProf: env.BENCH_CPU_PROF === '1',
  workersOff: env.BENCH_WORKERS === 'off',
  writeDoc: env.BENCH_WRITE_DOC !== '0',
  s4Port: num('BENCH_S4_PORT', 18480),
  vmPort: num('BENCH_VM_PORT', 18428),
};
const WORK = env.BENCH_WORK || '/tmp/s4-bench';
const VM_BIN = env.BENCH_VM_BIN || 'victoria-metrics';
const VM_METRIC = 'bench_value'; // dots are not valid in PromQL/MetricsQL metric names
// an unknown S4_* variable stops S4, so set the rollup interval only when this checkout knows it
const HAS_ROLLUP_KNOB = (() => {
  try {
    return readFileSync(join(ROOT, 'libs/config/src/config.ts'), 'utf8').includes('S4_ROLLUP_INTERVAL_MS');
  } catch {
    return false;
  }
})();
const log = (...a) => console.error(`[bench ${new Date().toISOString().slice(11, 19)}]`, ...a);

const packTyped = new Packr({ useRecords: false, moreTypes: true, variableMapSize: true });
const packPlain = new Packr({ useRecords: false, variableMapSize: true });
const unpackr = new Unpackr({ moreTypes: true, mapsAsObjects: true, int64AsType: 'number', useRecords: false });

// ---------------------------------------------------------------- body encoders (S4 and VM)
const tagJson = (name) => `{"sensor":"${name}"}`;
const S4_BODIES = {
  'json-samples': (b, metric = METRIC) => {
    const parts = [];
    for (const p of b.parts) {
      const head = `{"metric":"${metric}","tags":${tagJson(p.name)},"ts":`;
      for (let i = 0; i < p.ts.length; i++) parts.push(`${head}${p.ts[i]},"fields":{"value":${p.value[i]}}}`);
    }
    return { type: 'application/json', body: Buffer.from(`{"samples":[${parts.join(',')}]}`) };
  },
  'json-columnar': (b, metric = METRIC) => ({
    type: 'application/json',
    body: Buffer.from(`{"series":[${b.parts.map((p) => `{"metric":"${metric}","tags":${tagJson(p.name)},"ts":[${p.ts.join(',')}],"fields":{"value":[${p.value.join(',')}]}}`).join(',')}]}`),
  }),
  'msgpack-columnar': (b, metric = METRIC) => ({
    type: 'application/msgpack',
    body: packPlain.pack({ series: b.parts.map((p) => ({ metric, tags: { sensor: p.name }, ts: Array.from(p.ts), fields: { value: Array.from(p.value) } })) }),
  }),
  'msgpack-typed': (b, metric = METRIC) => ({
    type: 'application/msgpack',
    body: packTyped.pack({ series: b.parts.map((p) => ({ metric, tags: { sensor: p.name }, ts: p.ts.slice(), fields: { value: p.value.slice() } })) }),
  }),
};
/** VictoriaMetrics /api/v1/import: JSON lines, one line per series with values/timestamps arrays. */
const vmBody = (b) => Buffer.from(b.parts.map((p) => `{"metric":{"__name__":"${VM_METRIC}","sensor":"${p.name}"},"values":[${p.value.join(',')}],"timestamps":[${p.ts.join(',')}]}\n`).join(''));

// ---------------------------------------------------------------- servers
function childEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra };
}

function s4Env(mode, dataDir) {
  const common = {
    S4_HOST: '127.0.0.1',
    S4_PORT: String(K.s4Port),
    S4_LOG_LEVEL: 'warn',
    S4_NAMESPACE: 'bench',
    S4_DATA_DIR: dataDir,
    // BENCH_WORKERS=off parks the periodic flush and rollup workers (the bench still calls the
    // admin passes), to measure each phase alone; the default runs S4 as users do, workers on.
    ...(K.workersOff ? { S4_FLUSH_INTERVAL_MS: '3600000', ...(HAS_ROLLUP_KNOB ? { S4_ROLLUP_INTERVAL_MS: '3600000' } : {}) } : {}),
  };
  if (mode === 'embedded') return { ...common, S4_EMBEDDED_FSYNC: 'always' };
  if (mode === 'embedded-fsync-never') return { ...common, S4_EMBEDDED_FSYNC: 'never' };
  if (mode === 'redis+s3') {
    for (const k of ['S4_REDIS_URL', 'S4_S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      if (!env[k]) throw new Error(`mode redis+s3 needs ${k} (run.sh starts Redis and S3 and exports it)`);
    return {
      ...common,
      S4_REDIS_URL: env.S4_REDIS_URL,
      S4_S3_BUCKET: env.BENCH_S3_BUCKET || 's4-bench',
      S4_S3_ENDPOINT: env.S4_S3_ENDPOINT,
      S4_S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: env.AWS_REGION || 'us-east-1',
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
    };
  }
  throw new Error(`unknown mode ${mode} (embedded, redis+s3, embedded-fsync-never)`);
}

async function startS4(mode, name, { prof = false } = {}) {
  const dataDir = join(WORK, name);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const args = [];
  if (prof) args.push('--cpu-prof', `--cpu-prof-dir=${join(WORK, 'prof', name)}`);
  args.push(join(ROOT, 'apps/api/dist/main.js'));
  const child = start(process.execPath, args, { env: childEnv(s4Env(mode, dataDir)), log: join(WORK, `${name}.log`) });
  const url = `http://127.0.0.1:${K.s4Port}`;
  await Promise.race([waitHttp(`${url}/readyz`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 (${name}) exited during start: ${JSON.stringify(x)}; see ${join(WORK, `${name}.log`)}`)))]);
  return { child, url, dataDir, name };
}

async function startVM() {
  const dataDir = join(WORK, 'vm-data');
  rmSync(dataDir, { recursive: true, force: true });
  const flags = [`-httpListenAddr=127.0.0.1:${K.vmPort}`, `-storageDataPath=${dataDir}`, '-retentionPeriod=100y', '-search.disableCache', '-loggerLevel=ERROR'];
  const child = start(VM_BIN, flags, { env: childEnv({}), log: join(WORK, 'vm.log') });
  const url = `http://127.0.0.1:${K.vmPort}`;
  await Promise.race([waitHttp(`${url}/health`, 30_000), child.exitedPromise.then((x) => Promise.reject(new Error(`VictoriaMetrics exited during start: ${JSON.stringify(x)}`)))]);
  return { child, url, dataDir, flags };
}

// ---------------------------------------------------------------- bulk ingest
async function ingest(url, bodies, samplesPer, hours) {
  const done = new Float64Array(bodies.length);
  const t0 = performance.now();
  await mapLimit(bodies, K.ingestConcurrency, async (b, i) => {
    await ok(url, { method: 'POST', body: b.body, headers: { 'content-type': b.type } });
    done[i] = performance.now();
  });
  const ms = performance.now() - t0;
  const total = samplesPer.reduce((a, b) => a + b, 0);
  // per-hour rate: samples of hour h over the time between the end of hour h-1 and of hour h
  const hourRates = [];
  let prev = t0;
  for (let h = 0; h < hours.length; h++) {
    const idx = hours[h];
    const end = Math.max(...idx.map((i) => done[i]));
    const n = idx.reduce((a, i) => a + samplesPer[i], 0);
    if (end > prev) hourRates.push(n / ((end - prev) / 1000));
    prev = Math.max(prev, end);
  }
  return { samples: total, ms, samplesPerSec: total / (ms / 1000), requests: bodies.length, perHour: hourRates.length ? summary(hourRates) : null };
}

// ---------------------------------------------------------------- queries
const q = (o) => new URLSearchParams(o).toString();
const vmSec = (ms) => (ms / 1000).toFixed(3);

const parse = {
  s4json(buf) {
    const o = JSON.parse(buf.toString('utf8'));
    let points = 0;
    // points = values held: every field column counts (an avg,min,max answer holds 3 per bucket)
    for (const s of o.series) for (const col of Object.values(s.fields ?? {})) points += Array.isArray(col) ? col.length : 1;
    return { points, series: o.series.length };
  },
  s4msgpack(buf) {
    const maps = buf.length ? unpackr.unpackMultiple(buf) : [];
    let points = 0;
    const keys = new Set();
    for (const m of maps) {
      points += m.ts.length;
      keys.add(JSON.stringify(m.tags));
    }
    return { points, series: keys.size };
  },
  vmExport(buf) {
    const text = buf.toString('utf8');
    let points = 0;
    let series = 0;
    let i = 0;
    while (i < text.length) {
      let j = text.indexOf('\n', i);
      if (j < 0) j = text.length;
      if (j > i) {
        const o = JSON.parse(text.slice(i, j));
        points += o.values.length;
        series++;
      }
      i = j + 1;
    }
    return { points, series };
  },
  vmMatrix(buf) {
    const o = JSON.parse(buf.toString('utf8'));
    if (o.status !== 'success') throw new Error(`VM: ${buf.toString().slice(0, 300)}`);
    let points = 0;
    for (const r of o.data.result) {
      const vals = r.values ?? [r.value];
      const ts = new Float64Array(vals.length);
      const v = new Float64Array(vals.length);
      for (let i = 0; i < vals.length; i++) {
        ts[i] = vals[i][0] * 1000;
        v[i] = Number(vals[i][1]);
      }
      points += vals.length;
    }
    return { points, series: o.data.result.length };
  },
};

function queries(ds) {
  const sensor = ds.sensors[0].name;
  const midHour = ds.start + Math.floor((ds.end - ds.start) / HOUR / 2) * HOUR;
  const day = { from: ds.start, to: ds.end };
  const hour = { from: midHour, to: midHour + HOUR };
  const last = ds.end - 1;
  const vmExport = (match, r) => `/api/v1/export?${q({ 'match[]': match, start: vmSec(r.from), end: vmSec(r.to - 1) })}`;
  const vmRange = (query, r, step) => `/api/v1/query_range?${q({ query, start: vmSec(r.from), end: vmSec(r.to - 1), step })}`;
  const one = `${VM_METRIC}{sensor="${sensor}"}`;
  const s4 = s4Paths({ sensor, day, hour });
  return [
    {
      id: 'Q1',
      title: `raw, one sensor × ${ds.hours} h`,
      target: 0.5,
      expect: countRange(ds, day.from, day.to, sensor),
      s4: [
        { format: 'msgpack', path: s4.Q1.msgpack, parse: parse.s4msgpack },
        { format: 'json', path: s4.Q1.json, parse: parse.s4json },
      ],
      vm: { how: '/api/v1/export (JSON lines)', path: vmExport(one, day), parse: parse.vmExport },
    },
    {
      id: 'Q2',
      title: `raw, all ${ds.sensors.length} sensors × 1 h`,
      target: 0.5,
      expect: countRange(ds, hour.from, hour.to),
      s4: [
        { format: 'msgpack', path: s4.Q2.msgpack, parse: parse.s4msgpack },
        { format: 'json', path: s4.Q2.json, parse: parse.s4json },
      ],
      vm: { how: '/api/v1/export (JSON lines)', path: vmExport(VM_METRIC, hour), parse: parse.vmExport },
    },
    {
      id: 'Q3',
      title: `one sensor, 1-min avg/min/max × ${ds.hours} h`,
      target: 1.0,
      s4: [{ format: 'json', path: s4.Q3, parse: parse.s4json }],
      vm: { how: 'query_range aggr_over_time((min,max,avg)_over_time)[1m] step=1m', path: vmRange(`aggr_over_time(("min_over_time","max_over_time","avg_over_time"),${one}[1m])`, day, '60'), parse: parse.vmMatrix },
    },
    {
      id: 'Q4',
      title: `all sensors, 1-h avg × ${ds.hours} h`,
      target: 0.5,
      s4: [{ format: 'json', path: s4.Q4, parse: parse.s4json }],
      vm: { how: 'query_range avg_over_time(m[1h]) step=1h', path: vmRange(`avg_over_time(${VM_METRIC}[1h])`, day, '3600'), parse: parse.vmMatrix },
    },
    {
      id: 'Q5',
      title: 'latest value of every sensor',
      target: 1.0,
      expect: ds.sensors.length,
      s4: [{ format: 'json', path: s4.Q5, parse: parse.s4json }],
      vm: { how: 'instant query last_over_time(m[1h]) at the end of the data', path: `/api/v1/query?${q({ query: `last_over_time(${VM_METRIC}[1h])`, time: vmSec(last) })}`, parse: parse.vmMatrix },
    },
    {
      id: 'X1',
      title: `raw one sensor × ${ds.hours} h downsampled to 1000 points (S4 only)`,
      s4: [{ format: 'json', path: s4.X1, parse: parse.s4json }],
    },
  ];
}

async function timed(base, path, parseFn) {
  const t0 = performance.now();
  const r = await request(base + path);
  if (r.status !== 200) return { status: r.status, error: r.body.toString().slice(0, 300) };
  const p = parseFn(r.body);
  return { ms: performance.now() - t0, bytes: r.body.length, ...p };
}

function notImplemented(r) {
  return r.status === 400 || r.status === 404;
}

/** Warm-up once, then `repeats` rounds, alternating S4 and VM inside each round. */
async function runQueries(s4, vm, ds) {
  const out = {};
  for (const def of queries(ds)) {
    const res = { title: def.title, target: def.target ?? null, expect: def.expect ?? null, s4: {}, vm: null };
    const runners = [];
    for (const v of def.s4) {
      const warm = await timed(s4.url, v.path, v.parse).catch((e) => ({ status: -1, error: e.message }));
      if (warm.error !== undefined) {
        res.s4[v.format] = notImplemented(warm) ? { na: `n/a: not implemented (${warm.status})`, detail: warm.error.slice(0, 300) } : { na: `error ${warm.status}`, detail: warm.error };
        continue;
      }
      const acc = { ms: [], bytes: warm.bytes, points: warm.points, series: warm.series, path: v.path };
      res.s4[v.format] = acc;
      runners.push(async () => {
        const r = await timed(s4.url, v.path, v.parse);
        if (r.error !== undefined) throw new Error(`S4 ${def.id} ${v.format}: ${r.status} ${r.error}`);
        acc.ms.push(r.ms);
      });
    }
    if (def.vm && vm) {
      const warm = await timed(vm.url, def.vm.path, def.vm.parse);
      if (warm.error !== undefined) throw new Error(`VM ${def.id}: ${warm.status} ${warm.error}`);
      const acc = { how: def.vm.how, ms: [], bytes: warm.bytes, points: warm.points, series: warm.series, path: def.vm.path };
      res.vm = acc;
      runners.push(async () => {
        const r = await timed(vm.url, def.vm.path, def.vm.parse);
        if (r.error !== undefined) throw new Error(`VM ${def.id}: ${r.status} ${r.error}`);
        acc.ms.push(r.ms);
      });
    }
    for (let i = 0; i < K.repeats; i++) for (const run of runners) await run();
    for (const a of [...Object.values(res.s4), res.vm]) {
      if (!a || !a.ms) continue;
      a.latency = summary(a.ms);
      a.pointsPerSec = a.points / (a.latency.median / 1000);
    }
    out[def.id] = res;
    const s4m = Object.entries(res.s4).map(([f, a]) => `${f} ${a.latency ? `${a.latency.median.toFixed(1)} ms (${a.points} pts)` : a.na}`).join(', ');
    log(`${def.id}: S4 ${s4m}; VM ${res.vm ? `${res.vm.latency.median.toFixed(1)} ms (${res.vm.points} pts)` : '-'}`);
  }
  return out;
}

// ---------------------------------------------------------------- single-sample ingest
async function singleIngest(label, makeReq) {
  const ag = agent(K.singleClients);
  const lat = [];
  let errors = 0;
  let firstError = null;
  const deadline = performance.now() + K.singleSeconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: K.singleClients }, async (_, c) => {
      let lastTs = 0;
      let v = 10 + c;
      while (performance.now() < deadline) {
        const ts = Math.max(Date.now(), lastTs + 1);
        lastTs = ts;
        v = Math.round((v + 0.01) * 100) / 100;
        const { url, body, type } = makeReq(c, ts, v);
        const s = performance.now();
        const r = await request(url, { method: 'POST', body, headers: { 'content-type': type }, agent: ag }).catch((e) => ({ status: -1, body: Buffer.from(e.message) }));
        if (r.status >= 200 && r.status < 300) lat.push(performance.now() - s);
        else {
          errors++;
          firstError ??= `${r.status}: ${r.body.toString().slice(0, 200)}`;
        }
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  ag.destroy();
  const sorted = Float64Array.from(lat).sort();
  const res = { samples: lat.length, seconds: secs, samplesPerSec: lat.length / secs, p50: percentile(sorted, 50), p99: percentile(sorted, 99), errors, firstError };
  log(`single ${label}: ${res.samplesPerSec.toFixed(0)}/s p50 ${res.p50?.toFixed(2)} ms p99 ${res.p99?.toFixed(2)} ms errors ${errors}`);
  return res;
}

const s4Single = (url) => (c, ts, v) => ({
  url: `${url}/v1/write`,
  type: 'application/json',
  body: `{"samples":[{"metric":"bench.single","tags":{"client":"c${c}"},"ts":${ts},"fields":{"value":${v}}}]}`,
});
const vmSingle = (url) => (c, ts, v) => ({ url: `${url}/api/v1/import/prometheus`, type: 'text/plain', body: `bench_single{client="c${c}"} ${v} ${ts}\n` });

// ---------------------------------------------------------------- helpers
function pidFile(p) {
  try {
    return Number(readFileSync(p, 'utf8').trim()) || null;
  } catch {
    return null;
  }
}
// Newest mtime of the built server (apps/api/dist, libs/<lib>/dist): a concurrent `npm run build` shows up here.
function distStamp() {
  let newest = 0;
  const walk = (d) => {
    let names;
    try {
      names = readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of names) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('.js')) newest = Math.max(newest, statSync(p).mtimeMs);
    }
  };
  walk(join(ROOT, 'apps/api/dist'));
  for (const lib of readdirSync(join(ROOT, 'libs'))) walk(join(ROOT, 'libs', lib, 'dist'));
  return new Date(newest).toISOString();
}
function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
async function vmDiskStable(vm, maxMs = 120_000) {
  let last = -1;
  let stable = 0;
  const t0 = performance.now();
  while (performance.now() - t0 < maxMs) {
    const b = dirBytes(vm.dataDir).bytes;
    stable = b === last ? stable + 1 : 0;
    if (stable >= 3) break;
    last = b;
    await new Promise((r) => setTimeout(r, 1000));
  }
  return { ...dirBytes(vm.dataDir), ms: performance.now() - t0 };
}

// ---------------------------------------------------------------- main
async function main() {
  mkdirSync(WORK, { recursive: true });
  const started = new Date();
  const meta = {
    date: started.toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    machine: machine(),
    command: env.BENCH_COMMAND || 'npm run bench',
    knobs: K,
    vm: { version: env.BENCH_VM_VERSION || 'unknown' },
  };
  log('machine', JSON.stringify(meta.machine), 'knobs', JSON.stringify(K));

  // Dataset: hour-aligned, ending one hour before the current hour, so every window is closed.
  const t = performance.now();
  const end = Math.floor(Date.now() / HOUR) * HOUR - HOUR;
  const ds = generate({ sensors: K.sensors, hours: K.hours, start: end - K.hours * HOUR });
  ds.hours = K.hours;
  const bs = batches(ds, K.batchSamples);
  meta.dataset = { sensors: K.sensors, hours: K.hours, samples: ds.samples, jittered: ds.jittered, missing: ds.missing, start: new Date(ds.start).toISOString(), end: new Date(ds.end).toISOString(), batches: bs.length, samplesPerBatch: Math.round(ds.samples / bs.length), generateMs: Math.round(performance.now() - t) };
  log('dataset', JSON.stringify(meta.dataset));
  const samplesPer = bs.map((b) => b.samples);
  const hourIdx = [];
  bs.forEach((b, i) => (hourIdx[b.hour] ??= []).push(i));

  const results = { meta, probe: null, vm: {}, modes: {} };
  const children = [];
  const cleanup = async () => {
    for (const c of children.reverse()) await stop(c).catch(() => {});
  };
  process.on('SIGINT', () => cleanup().then(() => process.exit(130)));
  process.on('SIGTERM', () => cleanup().then(() => process.exit(143)));

  try {
    // ---- which S4 write body is fastest: a scratch embedded server, the first batches in each form
    const probeBatches = bs.slice(0, Math.min(bs.length, Math.max(3, Math.ceil(600_000 / K.batchSamples))));
    const probeSamples = probeBatches.reduce((a, b) => a + b.samples, 0);
    const scratch = await startS4('embedded', 'probe');
    children.push(scratch.child);
    results.probe = {};
    for (const [form, enc] of Object.entries(S4_BODIES)) {
      const te = performance.now();
      const bodies = probeBatches.map((b) => enc(b, `bench.probe.${form}`));
      const encodeMs = performance.now() - te;
      try {
        const r = await ingest(`${scratch.url}/v1/write`, bodies, probeBatches.map((b) => b.samples), []);
        results.probe[form] = { samplesPerSec: r.samplesPerSec, samples: probeSamples, bytes: bodies.reduce((a, b) => a + b.body.length, 0), clientEncodeMs: encodeMs };
      } catch (e) {
        results.probe[form] = { error: e.message.slice(0, 300) };
      }
      log(`probe ${form}: ${JSON.stringify(results.probe[form])}`);
    }
    await stop(scratch.child);
    children.pop();
    const best = Object.entries(results.probe).filter(([, v]) => v.samplesPerSec).sort((a, b) => b[1].samplesPerSec - a[1].samplesPerSec)[0]?.[0];
    if (!best) throw new Error(`S4 accepted no write body form: ${JSON.stringify(results.probe)}`);
    meta.s4WriteForm = best;
    log(`S4 bulk body form: ${best}`);

    // ---- encode every batch once for both systems (not timed as ingest)
    let te = performance.now();
    const s4Bodies = bs.map((b) => S4_BODIES[best](b));
    meta.s4EncodeMs = Math.round(performance.now() - te);
    te = performance.now();
    const vmBodies = bs.map((b) => ({ type: 'application/json', body: vmBody(b) }));
    meta.vmEncodeMs = Math.round(performance.now() - te);
    meta.s4BodyBytes = s4Bodies.reduce((a, b) => a + b.body.length, 0);
    meta.vmBodyBytes = vmBodies.reduce((a, b) => a + b.body.length, 0);

    // ---- VictoriaMetrics: load once, flush, bytes
    const vm = await startVM();
    children.push(vm.child);
    meta.vm.flags = vm.flags;
    log('VM ingest');
    results.vm.ingest = await ingest(`${vm.url}/api/v1/import`, vmBodies, samplesPer, hourIdx);
    let tf = performance.now();
    await ok(`${vm.url}/internal/force_flush`);
    results.vm.flushMs = performance.now() - tf;
    // force_flush returns before every part is on disk in this version: wait until du is stable
    const flushed = await vmDiskStable(vm);
    results.vm.bytesAfterFlush = { bytes: flushed.bytes, files: flushed.files, settleMs: flushed.ms };
    tf = performance.now();
    await ok(`${vm.url}/internal/force_merge`);
    const merged = await vmDiskStable(vm);
    results.vm.bytesAfterMerge = { bytes: merged.bytes, files: merged.files };
    results.vm.mergeMs = merged.ms;
    log(`VM ingest ${results.vm.ingest.samplesPerSec.toFixed(0)}/s, flush ${results.vm.flushMs.toFixed(0)} ms, bytes ${results.vm.bytesAfterFlush.bytes} → merged ${merged.bytes}`);
    vmBodies.length = 0;

    // ---- S4 modes
    for (const mode of K.modes) {
      const full = mode !== 'embedded-fsync-never';
      log(`S4 mode ${mode}`);
      const s4 = await startS4(mode, `s4-${mode.replace(/[^a-z0-9-]/g, '-')}`, { prof: K.cpuProf });
      children.push(s4.child);
      const m = (results.modes[mode] = { build: distStamp(), env: Object.fromEntries(Object.entries(s4Env(mode, s4.dataDir)).filter(([k]) => !k.startsWith('AWS_'))) });
      m.ingest = await ingest(`${s4.url}/v1/write`, s4Bodies, samplesPer, hourIdx);
      log(`S4 ${mode} ingest ${m.ingest.samplesPerSec.toFixed(0)}/s in ${(m.ingest.ms / 1000).toFixed(1)} s`);
      m.memAfterIngest = memory(s4.child.pid);
      if (full) {
        const tf2 = performance.now();
        const r = await ok(`${s4.url}/v1/admin/flush`, { method: 'POST' });
        m.flush = { ms: performance.now() - tf2, ...JSON.parse(r.body.toString()) };
        const again = JSON.parse((await ok(`${s4.url}/v1/admin/flush`, { method: 'POST' })).body.toString());
        m.flush.leftAfter = again;
        log(`S4 ${mode} flush ${m.flush.ms.toFixed(0)} ms ${r.body.toString()}`);
        if (mode === 'redis+s3') {
          const dir = join(env.BENCH_S3_DATA_DIR || '', env.BENCH_S3_BUCKET || 's4-bench');
          m.bytes = { ...dirBytes(dir), where: 'versitygw posix data dir of the bucket' };
        } else m.bytes = { ...dirBytes(join(s4.dataDir, 'objects')), where: '$S4_DATA_DIR/objects' };
        m.bytes.hotAfterFlush = dirBytes(join(s4.dataDir, 'hot')).bytes;
        const objectBytes = () => (mode === 'redis+s3' ? dirBytes(join(env.BENCH_S3_DATA_DIR || '', env.BENCH_S3_BUCKET || 's4-bench')) : dirBytes(join(s4.dataDir, 'objects')));
        // Rollups (1m/1h pre-aggregates) are built by a background worker; build them now, as the
        // steady state has them, and count their bytes at rest too.
        const tr = performance.now();
        const rr = await request(`${s4.url}/v1/admin/rollup`, { method: 'POST' });
        if (rr.status === 200) {
          m.rollup = { ms: performance.now() - tr, ...JSON.parse(rr.body.toString()) };
          m.bytesSegmentsOnly = m.bytes.bytes;
          m.bytes = { ...m.bytes, ...objectBytes() };
        } else m.rollup = { na: `n/a (${rr.status})` };
        m.bytesPerSample = m.bytes.bytes / ds.samples;
        log(`S4 ${mode} rollup ${JSON.stringify(m.rollup)}; bytes ${m.bytes.bytes} (${m.bytesPerSample.toFixed(3)} B/sample; segments+catalogs only ${m.bytesSegmentsOnly ?? '-'})`);
        m.queries = await runQueries(s4, vm, ds);
      }
      m.single = { s4: await singleIngest(`S4 ${mode}`, s4Single(s4.url)), vm: await singleIngest('VM', vmSingle(vm.url)) };
      m.memory = { s4: memory(s4.child.pid) };
      if (mode === 'redis+s3') {
        m.memory.redis = memory(pidFile(env.BENCH_REDIS_PIDFILE));
        m.memory.s3server = memory(pidFile(env.BENCH_S3_PIDFILE));
      }
      m.memory.vm = memory(vm.child.pid);
      log(`S4 ${mode} memory ${JSON.stringify(m.memory)}`);
      await stop(s4.child);
      children.splice(children.indexOf(s4.child), 1);
      if (K.cpuProf) {
        const dir = join(WORK, 'prof', s4.name);
        const files = readdirSync(dir).filter((f) => f.endsWith('.cpuprofile'));
        if (files.length) m.profile = { file: join(dir, files[0]), top: summarizeProfile(join(dir, files[0]), 25) };
      }
    }
    results.vm.memory = memory(vm.child.pid);
    results.finished = new Date().toISOString();
  } finally {
    await cleanup();
  }

  // ---- output
  const stamp = meta.date.replace(/[:.]/g, '-').slice(0, 19);
  mkdirSync(join(WORK, 'results'), { recursive: true });
  const json = JSON.stringify(results, (k, v) => (k === 'ms' && Array.isArray(v) ? v.map((x) => Math.round(x * 100) / 100) : v), 2);
  writeFileSync(join(WORK, 'results', `${stamp}.json`), json);
  if (K.writeDoc) {
    mkdirSync(join(ROOT, 'docs/bench-results'), { recursive: true });
    writeFileSync(join(ROOT, 'docs/bench-results/latest.json'), json);
    renderDoc(join(ROOT, 'docs/benchmarks.md'), results);
    log('wrote docs/bench-results/latest.json and docs/benchmarks.md');
  }
  log(`results: ${join(WORK, 'results', `${stamp}.json`)}`);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
