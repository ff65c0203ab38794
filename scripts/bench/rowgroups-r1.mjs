// Companion of records-r4.mjs for row groups (issue 11), on the same kept data dir ($BENCH_WORK/r4-data):
//
//   node scripts/bench/rowgroups-r1.mjs flush   # start S4 on the dir, flush the hot tier (retrying a flush
//                                              # that lost its lease to the periodic one), write r4-plan.json
//                                              # (BENCH_MACHINES, BENCH_RECORD_MINUTES, BENCH_PLAN_END: the hour the load ended in)
//   node scripts/bench/rowgroups-r1.mjs compact # fold each window's parts into one (S4_COMPACT_SETTLE_MS=0), so blocks hold the hour
//   node scripts/bench/rowgroups-r1.mjs read    # R1: one machine × the whole range, as SDK records and as parsed JSON
//                                              # (BENCH_R1_VARIANTS: sdk,json; also proj, R3: imu.vibration projected)
//
// Same knobs as records-r4.mjs (BENCH_WORK, BENCH_S4_PORT, BENCH_S4_DIST, BENCH_SDK_DIST, BENCH_REPEATS);
// server CPU from /proc per query, client CPU from process.cpuUsage().
import { existsSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { request, waitHttp } from './lib/http.mjs';
import { start, stop } from './lib/proc.mjs';
import { countRecords, machineName, plan } from './lib/records.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const WORK = env.BENCH_WORK || '/tmp/s4-r4';
const DATA = join(WORK, 'r4-data');
const PORT = num('BENCH_S4_PORT', 18480);
const URL_ = `http://127.0.0.1:${PORT}`;
const METRIC = 'machine.record';
const log = (...a) => console.error(`[r1 ${new Date().toISOString().slice(11, 19)}]`, ...a);

function childEnv(extra = {}) {
  const e = {};
  for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra, S4_HOST: '127.0.0.1', S4_PORT: String(PORT), S4_LOG_LEVEL: 'warn', S4_DATA_DIR: DATA, ...(env.BENCH_S4_CACHE_BYTES ? { S4_CACHE_BYTES: env.BENCH_S4_CACHE_BYTES } : {}) };
}

async function startS4(extra) {
  const main = env.BENCH_S4_DIST || join(ROOT, 'apps/api/dist/main.js');
  const child = start(process.execPath, [main], { env: childEnv(extra), log: join(WORK, 'r1-s4.log') });
  await Promise.race([waitHttp(`${URL_}/readyz`, 120_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 exited during start: ${JSON.stringify(x)}`)))]);
  return child;
}

function cpuMs(pid) {
  const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
  return ((Number(f[11]) + Number(f[12])) * 1000) / 100;
}

function dirBytes(dir) {
  let n = 0;
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    n += st.isDirectory() ? dirBytes(p) : st.size;
  }
  return n;
}

async function flush(what = 'flush', extra = undefined) {
  const s4 = await startS4(extra);
  try {
    for (let i = 0; i < 2; ) {
      const r = await request(`${URL_}/v1/admin/${what}`, { method: 'POST' });
      if (r.status === 409) {
        log(`${what} lost its lease to the periodic one; again`);
        await new Promise((ok) => setTimeout(ok, 1000));
      } else if (r.status >= 300) throw new Error(`${what} → ${r.status}: ${r.body.toString().slice(0, 300)}`);
      else i++;
    }
  } finally {
    await stop(s4);
  }
  if (!existsSync(join(WORK, 'r4-plan.json'))) {
    const p = plan({ machines: num('BENCH_MACHINES', 300), seconds: num('BENCH_RECORD_MINUTES', 20) * 60, end: num('BENCH_PLAN_END', NaN) });
    if (!Number.isFinite(p.end)) throw new Error('BENCH_PLAN_END (ms) is needed to write the plan');
    writeFileSync(join(WORK, 'r4-plan.json'), JSON.stringify(p));
  }
  const seg = join(DATA, 'objects/v1/default/seg');
  const p = JSON.parse(readFileSync(join(WORK, 'r4-plan.json'), 'utf8'));
  if (existsSync(seg)) log(`segments: ${dirBytes(seg)} bytes, ${(dirBytes(seg) / p.records).toFixed(1)} bytes/record`);
}

async function read() {
  const p = JSON.parse(readFileSync(join(WORK, 'r4-plan.json'), 'utf8'));
  const range = { from: p.start, to: p.end };
  const machine = machineName(7);
  const expect = countRecords(p, range.from, range.to, 7);
  const { S4Client } = await import(env.BENCH_SDK_DIST || join(ROOT, 'apps/sdk/dist/esm/index.js'));
  const s4 = await startS4();
  const sdk = new S4Client({ url: URL_, retry: { retries: 1, minDelayMs: 0, maxDelayMs: 0 } });
  const variants = {
    async sdk() {
      const out = [];
      for await (const chunk of sdk.records({ metric: METRIC, tags: { machine } }, range)) for (const r of chunk.records()) out.push(r);
      return out;
    },
    async json() {
      const r = await request(`${URL_}/v1/query?metric=${METRIC}&tag=machine:${machine}&from=${range.from}&to=${range.to}&format=json`);
      if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
      const o = JSON.parse(r.body.toString('utf8'));
      return o.series.flatMap((s) => s.ts);
    },
    // R3: the same, one field projected
    async proj() {
      const r = await request(`${URL_}/v1/query?metric=${METRIC}&tag=machine:${machine}&from=${range.from}&to=${range.to}&format=json&fields=imu.vibration`);
      if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
      return JSON.parse(r.body.toString('utf8')).series.flatMap((s) => s.ts);
    },
  };
  try {
    for (const name of (env.BENCH_R1_VARIANTS || 'sdk,json').split(',')) {
      const rows = [];
      for (let i = 0; i < num('BENCH_REPEATS', 5) + 1; i++) {
        const s0 = cpuMs(s4.pid);
        const t0 = performance.now();
        const out = await variants[name]();
        const wall = performance.now() - t0;
        const s1 = cpuMs(s4.pid);
        if (out.length !== expect) throw new Error(`${name}: expected ${expect} records, got ${out.length}`);
        if (i > 0) rows.push({ wall, server: s1 - s0 });
      }
      const med = (k) => rows.map((r) => r[k]).sort((a, b) => a - b)[rows.length >> 1];
      const fmt = (k) => `${med(k).toFixed(0)} (${rows.map((r) => r[k].toFixed(0)).join(' ')})`;
      console.log(`R1 ${name.padEnd(5)} ${expect} records: wall ${fmt('wall')} ms; server CPU ${fmt('server')} ms; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
    }
  } finally {
    await stop(s4);
  }
}

const cmd = process.argv[2];
if (cmd === 'flush') await flush();
else if (cmd === 'compact') await flush('compact', { S4_COMPACT_SETTLE_MS: '0' });
else if (cmd === 'read') await read();
else {
  console.error('usage: rowgroups-r1.mjs flush|read');
  process.exit(2);
}
