// SDK and CLI benchmark (issue 4), against the BUILT SDK (apps/sdk/dist/esm) and CLI (apps/cli/bin/s4.js).
//  1. write throughput through the SDK: the batching writer fed sample by sample (a device gateway),
//     client.write() of pre-built Sample[] batches (the SDK has no columnar write form), and, as a
//     reference without the SDK, raw columnar MessagePack POST /v1/write — per server mode
//     (embedded; Redis + S3 started here on their own ports/dirs);
//  2. read of one sensor × 30 days at 1 Hz (~2.6 M points) with client.query() and client.stream();
//  3. `s4 import` of a generated NDJSON file (CLI_BENCH_BYTES, default 1e9) into a fresh embedded server.
// Usage: npm run build && node scripts/bench/sdk.mjs
// Env: SDK_BENCH_HOURS (6) SDK_BENCH_SENSORS (200) SDK_BENCH_DAYS (30) SDK_BENCH_REPEATS (5)
//   SDK_BENCH_BATCH (5000) SDK_BENCH_CONCURRENCY (4) SDK_BENCH_MODES (embedded,redis+s3)
//   CLI_BENCH_BYTES (1e9) CLI_BENCH_MAX_S (240: the import is stopped there and extrapolated)
//   SDK_BENCH_PARTS (write,read,import) SDK_BENCH_CPU_PROF (0; 1 = node --cpu-prof on the servers and the CLI)
//   SDK_BENCH_WORK (/tmp/s4-sdkbench) SDK_BENCH_REDIS_PORT (6591) SDK_BENCH_S3_PORT (9591) SDK_BENCH_WRITE_DOC (1)
import { spawn, execFileSync, execSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { generate, HOUR } from './lib/dataset.mjs';
import { mapLimit, ok, waitHttp } from './lib/http.mjs';
import { dirBytes, machine, memory, start, stop } from './lib/proc.mjs';
import { summary } from './lib/stats.mjs';
import { summarizeProfile } from './profile-summary.mjs';

const root = new URL('../../', import.meta.url).pathname;
const sdkEntry = join(root, 'apps/sdk/dist/esm/index.js'); // package.json exports: import → ./dist/esm/index.js
for (const f of [sdkEntry, join(root, 'apps/api/dist/main.js'), join(root, 'apps/cli/dist/main.js')]) {
  if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build first`);
}
const { S4Client } = await import(sdkEntry);
const require = createRequire(import.meta.url);
const { Packr } = require('msgpackr');
const packr = new Packr({ useRecords: false, moreTypes: true });

const env = process.env;
const K = {
  hours: Number(env.SDK_BENCH_HOURS ?? 6),
  sensors: Number(env.SDK_BENCH_SENSORS ?? 200),
  days: Number(env.SDK_BENCH_DAYS ?? 30),
  repeats: Number(env.SDK_BENCH_REPEATS ?? 5),
  maxBatch: Number(env.SDK_BENCH_BATCH ?? 5000),
  concurrency: Number(env.SDK_BENCH_CONCURRENCY ?? 4),
  modes: (env.SDK_BENCH_MODES ?? 'embedded,redis+s3').split(',').map((s) => s.trim()).filter(Boolean),
  parts: (env.SDK_BENCH_PARTS ?? 'write,read,import').split(',').map((s) => s.trim()),
  cliBytes: Number(env.CLI_BENCH_BYTES ?? 1e9),
  cliMaxS: Number(env.CLI_BENCH_MAX_S ?? 240),
  prof: env.SDK_BENCH_CPU_PROF === '1',
};
const WORK = env.SDK_BENCH_WORK ?? '/tmp/s4-sdkbench';
const SVC_ENV = { ...env, S4_SERVICES_DIR: join(WORK, 'services'), S4_REDIS_PORT: env.SDK_BENCH_REDIS_PORT ?? '6591', S4_REDIS_DIR: join(WORK, 'redis'), S4_S3_PORT: env.SDK_BENCH_S3_PORT ?? '9591', S4_S3_DIR: join(WORK, 's3') };
const BUCKET = 's4-sdkbench';
const WRITE_START = Date.UTC(2026, 9, 1);
const READ_START = Date.UTC(2026, 6, 1);
const IMPORT_START = Date.UTC(2026, 3, 1);
const DAY = 24 * HOUR;
const log = (m) => process.stderr.write(`[sdk-bench] ${m}\n`);

// ---------- processes ----------
function services(cmd) {
  for (const svc of ['redis', 's3']) {
    try {
      const out = execFileSync('bash', [join(root, `scripts/services/${svc}.sh`), cmd], { env: SVC_ENV, stdio: ['ignore', 'pipe', 'inherit'] }).toString();
      for (const m of out.matchAll(/^export (\w+)=(.*)$/gm)) SVC_ENV[m[1]] = m[2];
    } catch (e) {
      if (cmd === 'start') throw e;
    }
  }
}
const pidOf = (file) => (existsSync(file) ? Number(readFileSync(file, 'utf8').trim()) : NaN);
/** utime + stime of a process in seconds (clock ticks of 10 ms). */
function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return NaN;
  }
}
const clientCpu = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
};

let portSeq = 0;
async function bootServer(mode, name) {
  const dir = join(WORK, name);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const port = 18600 + Math.floor(Math.random() * 300) + portSeq++;
  const senv = { ...env, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', S4_FLUSH_INTERVAL_MS: '3600000', S4_ROLLUP_INTERVAL_MS: '3600000' };
  if (mode === 'redis+s3') {
    Object.assign(senv, { S4_REDIS_URL: SVC_ENV.S4_REDIS_URL, S4_S3_BUCKET: BUCKET, S4_S3_ENDPOINT: SVC_ENV.S4_S3_ENDPOINT, S4_S3_FORCE_PATH_STYLE: 'true', AWS_REGION: SVC_ENV.AWS_REGION, AWS_ACCESS_KEY_ID: SVC_ENV.AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY: SVC_ENV.AWS_SECRET_ACCESS_KEY });
  }
  const args = K.prof ? ['--cpu-prof', `--cpu-prof-dir=${join(dir, 'prof')}`] : [];
  const child = start(process.execPath, [...args, join(root, 'apps/api/dist/main.js')], { env: senv, log: join(dir, 'server.log') });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/readyz`, 60_000);
  return { child, url, dir, mode };
}
async function stopServer(s) {
  const mem = memory(s.child.pid);
  await stop(s.child);
  let profile;
  if (K.prof && existsSync(join(s.dir, 'prof'))) {
    const f = readdirSync(join(s.dir, 'prof')).find((n) => n.endsWith('.cpuprofile'));
    if (f) profile = summarizeProfile(join(s.dir, 'prof', f), 12);
  }
  return { mem, profile };
}

/** Runs fn while sampling CPU seconds of the client (this process) and the server. */
async function measured(server, fn) {
  const c0 = clientCpu();
  const s0 = cpuSeconds(server.child.pid);
  const t0 = performance.now();
  const out = await fn();
  const sec = (performance.now() - t0) / 1000;
  return { ...out, sec, clientCpu: clientCpu() - c0, serverCpu: cpuSeconds(server.child.pid) - s0 };
}

// ---------- 1. writes ----------
function writeDataset() {
  const hours = [];
  let samples = 0;
  for (let h = 0; h < K.hours; h++) {
    const ds = generate({ sensors: K.sensors, hours: 1, start: WRITE_START + h * HOUR, seed: 4242 + h });
    hours.push(ds);
    samples += ds.samples;
  }
  return { hours, samples };
}
const sensorTags = Array.from({ length: K.sensors }, (_, s) => ({ sensor: `s${String(s).padStart(3, '0')}` }));

/** Gateway: one sample at a time, in time order (all sensors' samples of second k, then k+1). */
async function writerRun(client, data, metric) {
  const writer = client.writer({ maxBatch: K.maxBatch, concurrency: K.concurrency, flushMs: 1000 });
  let n = 0;
  let rssPeak = 0;
  for (const ds of data.hours) {
    const ptr = new Int32Array(ds.sensors.length);
    for (let k = 0; k < 3600; k++) {
      const lim = ds.start + (k + 1) * 1000;
      for (let s = 0; s < ds.sensors.length; s++) {
        const x = ds.sensors[s];
        let p = ptr[s];
        while (p < x.ts.length && x.ts[p] < lim) {
          await writer.write({ metric, tags: sensorTags[s], ts: x.ts[p], fields: { value: x.value[p] } });
          p++;
          n++;
        }
        ptr[s] = p;
      }
      if (k % 600 === 0) rssPeak = Math.max(rssPeak, process.memoryUsage().rss);
    }
  }
  await writer.close();
  const st = writer.stats();
  return { samples: n, acknowledged: st.acknowledged, batches: st.batches, retries: st.retries, clientRssPeak: rssPeak };
}

/** client.write() of Sample[] batches built before the clock starts (per hour), K.concurrency calls in flight. */
async function writeCallRun(client, data, metric) {
  let sec = 0;
  let n = 0;
  let cpu = 0;
  for (const ds of data.hours) {
    const rows = [];
    const ptr = new Int32Array(ds.sensors.length);
    for (let k = 0; k < 3600; k++) {
      const lim = ds.start + (k + 1) * 1000;
      for (let s = 0; s < ds.sensors.length; s++) {
        const x = ds.sensors[s];
        for (; ptr[s] < x.ts.length && x.ts[ptr[s]] < lim; ptr[s]++) rows.push({ metric, tags: sensorTags[s], ts: x.ts[ptr[s]], fields: { value: x.value[ptr[s]] } });
      }
    }
    const batches = [];
    for (let i = 0; i < rows.length; i += K.maxBatch) batches.push(rows.slice(i, i + K.maxBatch));
    const c0 = clientCpu();
    const t0 = performance.now();
    await mapLimit(batches, K.concurrency, (b) => client.write(b));
    sec += (performance.now() - t0) / 1000;
    cpu += clientCpu() - c0;
    n += rows.length;
  }
  return { samples: n, timedSec: sec, timedClientCpu: cpu };
}

/** Reference without the SDK: columnar MessagePack bodies (25 sensors × 1 h each), K.concurrency in flight. */
async function rawColumnarRun(url, data, metric) {
  let sec = 0;
  let n = 0;
  for (const ds of data.hours) {
    const bodies = [];
    for (let i = 0; i < ds.sensors.length; i += 25) {
      const series = ds.sensors.slice(i, i + 25).map((x, j) => ({ metric, tags: sensorTags[i + j], ts: x.ts, fields: { value: x.value } }));
      bodies.push(packr.pack({ series }));
    }
    const t0 = performance.now();
    await mapLimit(bodies, K.concurrency, (body) => ok(`${url}/v1/write`, { body, headers: { 'content-type': 'application/msgpack' } }));
    sec += (performance.now() - t0) / 1000;
    n += ds.samples;
  }
  return { samples: n, timedSec: sec };
}

async function flush(url) {
  const t0 = performance.now();
  const r = JSON.parse((await ok(`${url}/v1/admin/flush`, { method: 'POST' })).body.toString());
  return { ms: performance.now() - t0, ...r };
}

// ---------- 2. reads ----------
async function loadReadSensor(url) {
  let n = 0;
  const t0 = performance.now();
  for (let d = 0; d < K.days; d++) {
    const ds = generate({ sensors: 1, hours: 24, start: READ_START + d * DAY, seed: 777 + d });
    const x = ds.sensors[0];
    await ok(`${url}/v1/write`, { body: packr.pack({ series: [{ metric: 'bench.read', tags: { sensor: 's000' }, ts: x.ts, fields: { value: x.value } }] }), headers: { 'content-type': 'application/msgpack' } });
    n += x.ts.length;
  }
  const loadMs = performance.now() - t0;
  return { points: n, loadMs, flush: await flush(url) };
}

async function readRuns(client, expected) {
  const spec = { metric: 'bench.read', tags: { sensor: 's000' }, from: READ_START, to: READ_START + K.days * DAY };
  const viaQuery = async () => {
    const t0 = performance.now();
    const r = await client.query(spec);
    const ms = performance.now() - t0;
    const s = r.series[0];
    if (r.points !== expected || !(s.ts instanceof Float64Array) || !(s.fields.value instanceof Float64Array)) throw new Error(`query(): ${r.points} points (expected ${expected}), ts ${s?.ts?.constructor?.name}`);
    return ms;
  };
  const viaStream = async () => {
    const t0 = performance.now();
    let points = 0;
    let chunks = 0;
    let sum = 0;
    for await (const c of client.stream(spec)) {
      points += c.ts.length;
      chunks++;
      sum += c.fields.value[0];
    }
    const ms = performance.now() - t0;
    if (points !== expected || !Number.isFinite(sum)) throw new Error(`stream(): ${points} points (expected ${expected})`);
    return { ms, chunks };
  };
  const out = {};
  await viaQuery(); // warm-up (fills the server's decoded-block cache, JITs the client)
  const q = [];
  for (let i = 0; i < K.repeats; i++) q.push(await viaQuery());
  out.query = summary(q);
  await viaStream();
  const st = [];
  let chunks = 0;
  for (let i = 0; i < K.repeats; i++) {
    const r = await viaStream();
    st.push(r.ms);
    chunks = r.chunks;
  }
  out.stream = { ...summary(st), chunks };
  return out;
}

// ---------- 3. CLI import ----------
async function importFile() {
  const dir = join(WORK, 'import');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `bench-${K.cliBytes}.ndjson`);
  const meta = `${file}.meta.json`;
  if (existsSync(file) && existsSync(meta)) {
    const m = JSON.parse(readFileSync(meta, 'utf8'));
    if (m.bytes === statSync(file).size) return { file, ...m, generatedSec: 0 };
  }
  log(`generating ${file} (${(K.cliBytes / 1e9).toFixed(2)} GB)`);
  const t0 = performance.now();
  const out = createWriteStream(file);
  const v = Float64Array.from(sensorTags, (_, s) => 20 + (s % 40));
  const prefix = sensorTags.map((t) => `{"metric":"bench.import","tags":{"sensor":"${t.sensor}"},"ts":`);
  let bytes = 0;
  let rows = 0;
  let sec = 0;
  while (bytes < K.cliBytes) {
    let chunk = '';
    for (let k = 0; k < 100 && bytes + chunk.length < K.cliBytes; k++, sec++) {
      const ts = IMPORT_START + sec * 1000;
      for (let s = 0; s < prefix.length; s++) {
        v[s] += ((((sec * 7919 + s * 104729) % 1000) / 1000) - 0.5) * 0.4;
        chunk += `${prefix[s]}${ts},"fields":{"value":${(Math.round(v[s] * 100) / 100).toFixed(2)}}}\n`;
        rows++;
      }
    }
    bytes += Buffer.byteLength(chunk);
    if (!out.write(chunk)) await new Promise((r) => out.once('drain', r));
  }
  await new Promise((r, j) => out.end((e) => (e ? j(e) : r())));
  const m = { bytes: statSync(file).size, rows, seconds: sec };
  writeFileSync(meta, JSON.stringify(m));
  return { file, ...m, generatedSec: (performance.now() - t0) / 1000 };
}

async function cliImport(file, server) {
  const args = [...(K.prof ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'cli-prof')}`] : []), join(root, 'apps/cli/bin/s4.js'), 'import', file.file, '--url', server.url, '--batch', String(K.maxBatch), '--concurrency', String(K.concurrency)];
  const s0 = cpuSeconds(server.child.pid);
  const t0 = performance.now();
  const cli = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  cli.stderr.on('data', (d) => (stderr += d));
  cli.stdout.on('data', () => {});
  let cliHwm = 0;
  let cliCpu = 0;
  const poll = setInterval(() => {
    const m = memory(cli.pid);
    if (m) cliHwm = Math.max(cliHwm, m.hwm);
    const c = cpuSeconds(cli.pid);
    if (Number.isFinite(c)) cliCpu = c;
  }, 250);
  let truncated = false;
  const timer = setTimeout(() => {
    truncated = true;
    cli.kill('SIGTERM');
  }, K.cliMaxS * 1000);
  const exit = await new Promise((r) => cli.on('exit', (code, signal) => r({ code, signal })));
  const sec = (performance.now() - t0) / 1000;
  clearTimeout(timer);
  clearInterval(poll);
  const serverCpu = cpuSeconds(server.child.pid) - s0;
  let rows = file.rows;
  if (truncated) {
    // how far it got: count what the server stored (the file is in time order, so stored ≈ read)
    const client = new S4Client({ url: server.url, timeoutMs: 600_000 });
    rows = 0;
    for await (const c of client.stream({ metric: 'bench.import', from: 0, to: IMPORT_START + (file.seconds + 1) * 1000 })) rows += c.ts.length;
  } else if (exit.code !== 0) throw new Error(`s4 import exited ${JSON.stringify(exit)}: ${stderr.slice(-2000)}`);
  let profile;
  if (K.prof && existsSync(join(WORK, 'cli-prof'))) {
    const f = readdirSync(join(WORK, 'cli-prof')).find((n) => n.endsWith('.cpuprofile'));
    if (f) profile = summarizeProfile(join(WORK, 'cli-prof', f), 12);
  }
  const bytes = truncated ? Math.round((rows / file.rows) * file.bytes) : file.bytes;
  return { truncated, exit, sec, rows, bytes, rowsPerSec: rows / sec, mbPerSec: bytes / 1e6 / sec, cliHwm, cliCpu, serverCpu, summaryLine: stderr.trim().split('\n').pop(), profile };
}

// ---------- run ----------
const results = { meta: { date: new Date().toISOString(), machine: machine(), loadStart: loadavg(), knobs: K }, modes: {} };
try {
  results.meta.commit = execSync('git rev-parse --short HEAD', { cwd: root }).toString().trim();
  results.meta.dirty = execSync('git status --porcelain --untracked-files=no', { cwd: root }).toString().trim() !== '';
} catch {
  results.meta.commit = 'unknown';
}

services('stop');
if (existsSync(WORK)) for (const name of readdirSync(WORK)) if (name !== 'import') rmSync(join(WORK, name), { recursive: true, force: true }); // keep the generated import file
mkdirSync(WORK, { recursive: true });
const needServices = K.modes.includes('redis+s3') && (K.parts.includes('write') || K.parts.includes('read'));
try {
  if (needServices) {
    log('starting Redis and S3');
    services('start');
  }
  const data = K.parts.includes('write') ? writeDataset() : undefined;
  for (const mode of K.parts.includes('write') || K.parts.includes('read') ? K.modes : []) {
    log(`${mode}: server`);
    const server = await bootServer(mode, mode.replace('+', '-'));
    const client = new S4Client({ url: server.url });
    const m = (results.modes[mode] = {});
    if (data) {
      log(`${mode}: writer, ${data.samples} samples one by one`);
      m.writer = await measured(server, () => writerRun(client, data, 'bench.sdk.writer'));
      m.flushWriter = await flush(server.url);
      log(`${mode}: writer ${Math.round(m.writer.samples / m.writer.sec)} samples/s; client.write() batches`);
      m.writeCall = await measured(server, () => writeCallRun(client, data, 'bench.sdk.write'));
      m.flushWriteCall = await flush(server.url);
      log(`${mode}: client.write ${Math.round(m.writeCall.samples / m.writeCall.timedSec)} samples/s; raw columnar`);
      m.raw = await measured(server, () => rawColumnarRun(server.url, data, 'bench.sdk.raw'));
      m.flushRaw = await flush(server.url);
    }
    if (K.parts.includes('read')) {
      log(`${mode}: loading ${K.days} days of one sensor`);
      m.readLoad = await loadReadSensor(server.url);
      log(`${mode}: reading ${m.readLoad.points} points`);
      m.read = await readRuns(client, m.readLoad.points);
    }
    const stopped = await stopServer(server);
    m.serverMem = stopped.mem;
    m.profile = stopped.profile;
    if (mode === 'redis+s3') {
      m.redisMem = memory(pidOf(join(WORK, 'redis/redis.pid')));
      m.s3Mem = memory(pidOf(join(WORK, 's3/s3.pid')));
      m.objectBytes = dirBytes(join(WORK, 's3/data', BUCKET));
    } else m.objectBytes = dirBytes(join(server.dir, 'objects'));
  }
} finally {
  if (needServices) services('stop');
}

if (K.parts.includes('import')) {
  const file = await importFile();
  results.importFile = file;
  log(`import: ${file.rows} rows, ${file.bytes} bytes; fresh embedded server`);
  const server = await bootServer('embedded', 'import-server');
  let memPeak = 0;
  const poll = setInterval(() => (memPeak = Math.max(memPeak, memory(server.child.pid)?.hwm ?? 0)), 250);
  results.import = await cliImport(file, server);
  clearInterval(poll);
  const stopped = await stopServer(server);
  results.import.serverHwm = Math.max(memPeak, stopped.mem?.hwm ?? 0);
  results.import.serverProfile = stopped.profile;
  log(`import: ${Math.round(results.import.rowsPerSec)} rows/s`);
}
results.meta.loadEnd = loadavg();
writeFileSync(join(WORK, 'results.json'), JSON.stringify(results, null, 2));

// ---------- report ----------
const k = (x) => (x >= 1e6 ? `${(x / 1e6).toFixed(2)} M` : x >= 1e3 ? `${(x / 1e3).toFixed(1)} k` : x.toFixed(0));
const MiB = (b) => `${(b / 2 ** 20).toFixed(0)} MiB`;
const s2 = (x) => x.toFixed(2);
const meta = results.meta;
const md = [
  `Run of ${meta.date.slice(0, 16).replace('T', ' ')} UTC on commit \`${meta.commit}\`${meta.dirty ? ' (with uncommitted changes)' : ''}; command \`node scripts/bench/sdk.mjs\` (after \`npm run build\`; knobs: ${['SDK_BENCH_HOURS', 'SDK_BENCH_SENSORS', 'SDK_BENCH_DAYS', 'SDK_BENCH_REPEATS', 'CLI_BENCH_BYTES', 'SDK_BENCH_MODES', 'SDK_BENCH_PARTS', 'SDK_BENCH_CPU_PROF'].filter((v) => env[v] !== undefined).map((v) => `${v}=${env[v]}`).join(' ') || 'defaults'}).`,
  '',
  `- Machine: ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.ramGiB} GiB; Node ${meta.machine.node}. Client (this script / the CLI) and server share the ${meta.machine.cores} cores; other processes may have run (load average ${meta.loadStart.map((x) => x.toFixed(1)).join(' ')} at start, ${meta.loadEnd.map((x) => x.toFixed(1)).join(' ')} at end).`,
  `- Servers: \`apps/api/dist/main.js\`, embedded (default \`S4_EMBEDDED_FSYNC=always\`) or Redis + S3 (redis-server, versitygw, both local), flush/rollup workers parked (\`S4_*_INTERVAL_MS=3600000\`). SDK: built \`@s4/sdk\` (ESM), default options (MessagePack write bodies, Node's global fetch).`,
];
if (results.modes && Object.values(results.modes).some((m) => m.writer)) {
  const any = Object.values(results.modes).find((m) => m.writer);
  md.push(
    '',
    `### Writes: ${K.sensors} sensors × 1 Hz × ${K.hours} h = ${any.writer.samples.toLocaleString('en-US')} samples`,
    '',
    `- **writer**: \`client.writer({ maxBatch: ${K.maxBatch}, concurrency: ${K.concurrency}, flushMs: 1000 })\` (the documented defaults, also the CLI's), fed with \`await writer.write(sample)\` one sample at a time in time order (all sensors' samples of one second, then the next), as a gateway would; clock includes building each sample object and \`close()\`.`,
    `- **client.write()**: the SDK has **no columnar write form** (\`write()\` takes \`Sample\` objects only), so this is \`client.write(batch)\` of pre-built \`Sample[]\` arrays of ${K.maxBatch}, ${K.concurrency} calls in flight; building the arrays is outside the clock.`,
    `- **raw columnar (no SDK, reference)**: \`POST /v1/write\` MessagePack \`{series:[{metric,tags,ts:Float64Array,fields:{value:Float64Array}}]}\`, 25 sensors × 1 h (90 000 samples) per request, ${K.concurrency} in flight — what the server takes when the client has no per-sample cost.`,
    `- CPU columns: CPU seconds used during the run by the client process and by the S4 server (from /proc); on ${meta.machine.cores} cores their sum bounds the rate.`,
    '',
    '| mode | path | samples/s | wall s | client CPU s | server CPU s | flush after |',
    '|---|---|---|---|---|---|---|',
  );
  for (const [mode, m] of Object.entries(results.modes)) {
    if (!m.writer) continue;
    md.push(`| ${mode} | writer, sample by sample | **${k(m.writer.samples / m.writer.sec)}/s** | ${m.writer.sec.toFixed(1)} | ${m.writer.clientCpu.toFixed(1)} | ${m.writer.serverCpu.toFixed(1)} | ${(m.flushWriter.ms / 1000).toFixed(1)} s |`);
    md.push(`| ${mode} | client.write(Sample[${K.maxBatch}]) | ${k(m.writeCall.samples / m.writeCall.timedSec)}/s | ${m.writeCall.timedSec.toFixed(1)} | ${m.writeCall.timedClientCpu.toFixed(1)} | ${m.writeCall.serverCpu.toFixed(1)} | ${(m.flushWriteCall.ms / 1000).toFixed(1)} s |`);
    md.push(`| ${mode} | raw columnar msgpack (no SDK) | ${k(m.raw.samples / m.raw.timedSec)}/s | ${m.raw.timedSec.toFixed(1)} | — | ${m.raw.serverCpu.toFixed(1)} | ${(m.flushRaw.ms / 1000).toFixed(1)} s |`);
  }
  md.push('', `Writer: ${Object.entries(results.modes).filter(([, m]) => m.writer).map(([mode, m]) => `${mode} ${m.writer.batches} batches, ${m.writer.retries} retries, ${m.writer.acknowledged.toLocaleString('en-US')} acknowledged, client RSS peak ${MiB(m.writer.clientRssPeak)}`).join('; ')}.`);
}
if (Object.values(results.modes).some((m) => m.read)) {
  const any = Object.values(results.modes).find((m) => m.read);
  md.push(
    '',
    `### Read: one sensor × ${K.days} days at 1 Hz = ${any.readLoad.points.toLocaleString('en-US')} points into typed arrays`,
    '',
    `Loaded with ${K.days} columnar MessagePack writes (one per day) and flushed to the object store (\`POST /v1/admin/flush\`) before reading, so reads come from segments (warm: decoded-block cache filled by the warm-up). \`client.query()\` returns one series with \`ts\` and \`fields.value\` as \`Float64Array\` (checked); \`client.stream()\` iterates the chunks (counting points, touching each chunk). 1 warm-up, then median (min–max) of ${K.repeats}.`,
    '',
    '| mode | call | seconds | points/s | chunks |',
    '|---|---|---|---|---|',
  );
  for (const [mode, m] of Object.entries(results.modes)) {
    if (!m.read) continue;
    const p = m.readLoad.points;
    md.push(`| ${mode} | client.query() | **${s2(m.read.query.median / 1000)}** (${s2(m.read.query.min / 1000)}–${s2(m.read.query.max / 1000)}) | **${k(p / (m.read.query.median / 1000))}/s** | |`);
    md.push(`| ${mode} | client.stream() | ${s2(m.read.stream.median / 1000)} (${s2(m.read.stream.min / 1000)}–${s2(m.read.stream.max / 1000)}) | ${k(p / (m.read.stream.median / 1000))}/s | ${m.read.stream.chunks} |`);
  }
}
if (Object.keys(results.modes).length) {
  md.push('', `Server peak RSS (VmHWM over the whole mode run): ${Object.entries(results.modes).map(([mode, m]) => `${mode} S4 ${MiB(m.serverMem?.hwm ?? NaN)}${m.redisMem ? ` + Redis ${MiB(m.redisMem.hwm)} (versitygw ${MiB(m.s3Mem?.hwm ?? NaN)})` : ''}`).join('; ')}.`);
}
if (results.import) {
  const f = results.importFile;
  const r = results.import;
  md.push(
    '',
    `### CLI import: ${(f.bytes / 1e9).toFixed(2)} GB NDJSON, ${f.rows.toLocaleString('en-US')} rows`,
    '',
    `\`node apps/cli/bin/s4.js import ${f.file} --url … --batch ${K.maxBatch} --concurrency ${K.concurrency}\` (defaults) into a fresh embedded server; one \`{"metric":"bench.import","tags":{"sensor":"sNNN"},"ts":…,"fields":{"value":12.34}}\` per line (${(f.bytes / f.rows).toFixed(0)} B/line), ${K.sensors} sensors × 1 Hz in time order.`,
    '',
    '| figure | value |',
    '|---|---|',
    r.truncated
      ? `| **stopped after ${K.cliMaxS} s** (limit CLI_BENCH_MAX_S) | ${r.rows.toLocaleString('en-US')} rows stored (counted on the server) ≈ ${(r.bytes / 1e6).toFixed(0)} MB of the file |`
      : `| wall time | **${r.sec.toFixed(1)} s** |`,
    `| rows/s | **${k(r.rowsPerSec)}/s** |`,
    `| MB/s (file bytes, 10⁶) | **${r.mbPerSec.toFixed(1)} MB/s** |`,
    ...(r.truncated ? [`| **extrapolated** wall time for the whole ${(f.bytes / 1e9).toFixed(2)} GB at that rate | ~${(f.rows / r.rowsPerSec).toFixed(0)} s (extrapolation, not measured) |`] : []),
    `| server peak RSS (VmHWM) | ${MiB(r.serverHwm)} |`,
    `| CLI peak RSS (VmHWM, polled 4×/s) | ${MiB(r.cliHwm)} |`,
    `| CPU seconds: CLI / server | ${r.cliCpu.toFixed(0)} / ${r.serverCpu.toFixed(0)} |`,
    `| CLI's own summary | \`${(r.summaryLine ?? '').replace(/\|/g, '/')}\` |`,
  );
}
for (const [label, prof] of [...Object.entries(results.modes).map(([mode, m]) => [`S4 server, ${mode} (write + read run)`, m.profile]), ['CLI import process', results.import?.profile], ['S4 server during CLI import', results.import?.serverProfile]]) {
  if (!prof) continue;
  md.push('', `CPU profile, ${label} (top self time):`, '', '| self % | ms | function |', '|---|---|---|', ...prof.slice(0, 10).map((r) => `| ${r.pct} | ${r.ms} | \`${r.fn.replace(/\|/g, '/')}\` |`));
}
md.push('', `Raw figures of the last run: \`${join(WORK, 'results.json')}\` (not committed).`);
const text = md.join('\n');
console.log(text);
if (env.SDK_BENCH_WRITE_DOC !== '0') {
  const doc = join(root, 'docs/benchmarks.md');
  const cur = readFileSync(doc, 'utf8');
  const A = '<!-- sdk-bench:start -->';
  const B = '<!-- sdk-bench:end -->';
  const block = `${A}\n${text}\n${B}`;
  const a = cur.indexOf(A);
  const b = cur.indexOf(B);
  writeFileSync(doc, a >= 0 && b > a ? cur.slice(0, a) + block + cur.slice(b + B.length) : `${cur.trimEnd()}\n\n## SDK and CLI (issue 4)\n\n${block}\n`);
}
