// Focused R4 probe (issue 11): a kept records data dir, read back by the built SDK (records() and
// column()) and as parsed JSON, with the server's and the client's CPU per query.
//
//   node scripts/bench/records-r4.mjs load   # once: BENCH_MACHINES × BENCH_RECORD_MINUTES into $BENCH_WORK/r4-data
//   node scripts/bench/records-r4.mjs read   # start S4 on that dir, time R4 (BENCH_REPEATS rounds, median)
//
// Knobs: BENCH_WORK (/tmp/s4-r4), BENCH_S4_PORT (18480), BENCH_MACHINES (300), BENCH_RECORD_MINUTES
// (20), BENCH_REPEATS (3), BENCH_R4_VARIANTS (sdk,column,json; also ndjson, built: records built, not held, and r1sdk, r1json, r1ndjson: one
// machine × the whole range), BENCH_S4_CACHE_BYTES (S4_CACHE_BYTES), BENCH_S4_NODE_ARGS (e.g. --cpu-prof
// --cpu-prof-dir=/tmp/prof), BENCH_S4_DIST (apps/api/dist/main.js of another checkout, to compare
// builds on the same data), BENCH_SDK_DIST (the SDK's dist/esm/index.js, likewise). CPU figures: the server's utime+stime from /proc/PID/stat around each
// query, the client's process.cpuUsage(); wall time is printed too but is noisy on a shared machine.
// JSON and NDJSON rows also print the answer's bytes and a sha256 prefix, so that two builds can be
// held to byte-identical answers on the same data.
import { createHash } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { request } from './lib/http.mjs';
import { cpuMs, stop } from './lib/proc.mjs';
import { countRecords, forEachRecord, machineName, machineRecords, plan } from './lib/records.mjs';
import { HOUR } from './lib/dataset.mjs';
import { DATA, METRIC, ROOT, URL_, WORK, adminPass, num, readPlan, startS4 } from './lib/kept-records.mjs';

const env = process.env;
const log = (...a) => console.error(`[r4 ${new Date().toISOString().slice(11, 19)}]`, ...a);

async function load() {
  const machines = num('BENCH_MACHINES', 300);
  const minutes = num('BENCH_RECORD_MINUTES', 20);
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const p = plan({ machines, seconds: minutes * 60, end });
  rmSync(DATA, { recursive: true, force: true });
  mkdirSync(DATA, { recursive: true });
  const s4 = await startS4();
  try {
    const heads = Array.from({ length: machines }, (_, m) => `{"metric":"${METRIC}","tags":{"machine":"${machineName(m)}"},"ts":`);
    const bodies = [];
    let parts = [];
    forEachRecord(p, (m, ts, text) => {
      parts.push(`${heads[m]}${ts},"fields":${text}}`);
      if (parts.length === 500) bodies.push(`{"samples":[${parts.join(',')}]}`), (parts = []);
    });
    if (parts.length) bodies.push(`{"samples":[${parts.join(',')}]}`);
    log(`writing ${p.records} records in ${bodies.length} batches`);
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          // 503 = the hot tier asks the writer to back off; the same batch again is safe (idempotent)
          for (;;) {
            const r = await request(`${URL_}/v1/write`, { method: 'POST', body, headers: { 'content-type': 'application/json' } });
            if (r.status === 503) await new Promise((ok) => setTimeout(ok, 200));
            else if (r.status >= 300) throw new Error(`write → ${r.status}: ${r.body.toString().slice(0, 300)}`);
            else break;
          }
        }
      }),
    );
    log('flushing');
    await adminPass('flush', log);
    writeFileSync(join(WORK, 'r4-plan.json'), JSON.stringify(p));
    log('loaded', p);
  } finally {
    await stop(s4);
  }
}

async function read() {
  const p = readPlan();
  const ten = { from: p.start, to: Math.min(p.end, p.start + 10 * 60_000) };
  if (p.seconds >= 3600) (ten.from = p.start + 20 * 60_000), (ten.to = ten.from + 10 * 60_000);
  const expect = countRecords(p, ten.from, ten.to);
  const { S4Client } = await import(env.BENCH_SDK_DIST || join(ROOT, 'apps/sdk/dist/esm/index.js'));
  const s4 = await startS4();
  const sdk = new S4Client({ url: URL_, retry: { retries: 1, minDelayMs: 0, maxDelayMs: 0 } });
  const variants = {
    async sdk() {
      const out = [];
      for await (const chunk of sdk.records({ metric: METRIC }, ten)) {
        const machine = chunk.tags.machine;
        for (const r of chunk.records()) out.push({ machine, ts: r.ts, rec: r.fields });
      }
      return out;
    },
    // Every record built, none held (how much of records() is holding 180,000 object graphs).
    async built() {
      const out = [];
      for await (const chunk of sdk.records({ metric: METRIC }, ten)) {
        let n = 0;
        for (const r of chunk.records()) if (r.fields) n++;
        for (let i = 0; i < n; i++) out.push(i);
      }
      return out;
    },
    async column() {
      const out = [];
      for await (const chunk of sdk.records({ metric: METRIC }, ten)) {
        const col = chunk.column('imu.vibration');
        for (let i = 0; i < chunk.length; i++) out.push({ ts: chunk.ts[i], v: col[i] });
      }
      return out;
    },
    json: () => jsonRecords(`&from=${ten.from}&to=${ten.to}`),
    ndjson: () => ndjsonRecords(`&from=${ten.from}&to=${ten.to}`),
    // R1: one machine × the whole range, through the SDK (records built and held), as JSON and
    // NDJSON (the per-query cost of a small answer)
    async r1sdk() {
      const out = [];
      for await (const chunk of sdk.records({ metric: METRIC, tags: { machine: machineName(0) } }, { from: p.start, to: p.end })) {
        const machine = chunk.tags.machine;
        for (const r of chunk.records()) out.push({ machine, ts: r.ts, rec: r.fields });
      }
      return out;
    },
    r1json: () => jsonRecords(`&tag=machine:${machineName(0)}&from=${p.start}&to=${p.end}`),
    r1ndjson: () => ndjsonRecords(`&tag=machine:${machineName(0)}&from=${p.start}&to=${p.end}`),
  };
  const r1 = countRecords(p, p.start, p.end, 0);
  const names = (env.BENCH_R4_VARIANTS || 'sdk,column,json').split(',');
  const repeats = num('BENCH_REPEATS', 3);
  try {
    // exactness spot check: machine 0's records deep-equal what was written
    const want = machineRecords(p, 0, ten.from, ten.to);
    const got = (await variants.sdk()).filter((r) => r.machine === machineName(0));
    if (JSON.stringify(got.map((r) => [r.ts, r.rec])) !== JSON.stringify(want.map((r) => [r.ts, r.rec])) && !deepSame(got, want))
      throw new Error('machine 0 differs from what was written');
    for (const name of names) {
      const rows = [];
      for (let i = 0; i < repeats + 1; i++) {
        globalThis.gc?.();
        const s0 = cpuMs(s4.pid);
        const c0 = process.cpuUsage();
        const t0 = performance.now();
        const out = await variants[name]();
        const wall = performance.now() - t0;
        const c = process.cpuUsage(c0);
        const s1 = cpuMs(s4.pid);
        if (out.length !== (name.startsWith('r1') ? r1 : expect)) throw new Error(`${name}: expected ${expect} records, got ${out.length}`);
        if (i > 0) rows.push({ wall, server: s1 - s0, client: (c.user + c.system) / 1000 });
      }
      const out0 = name.startsWith('r1') ? r1 : expect;
      const med = (k) => rows.map((r) => r[k]).sort((a, b) => a - b)[rows.length >> 1];
      const fmt = (k) => `${med(k).toFixed(0)} (${rows.map((r) => r[k].toFixed(0)).join(' ')})`;
      console.log(`${name.startsWith('r1') ? 'R1' : 'R4'} ${name.padEnd(8)} ${out0} records: wall ${fmt('wall')} ms; server CPU ${fmt('server')} ms; client CPU ${fmt('client')} ms; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}${lastAnswer}`);
      lastAnswer = '';
    }
  } finally {
    await stop(s4);
  }
}

/** A JSON answer parsed, its records built as the application would hold them. */
async function jsonRecords(query) {
  const r = await request(`${URL_}/v1/query?metric=${METRIC}${query}&format=json`);
  if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
  answered(r.body);
  const o = JSON.parse(r.body.toString('utf8'));
  const out = [];
  for (const s of o.series) {
    const names = Object.keys(s.fields ?? {});
    for (let i = 0; i < s.ts.length; i++) {
      const rec = {};
      for (const n of names) if (s.fields[n][i] != null) rec[n] = s.fields[n][i];
      out.push({ machine: s.tags.machine, ts: s.ts[i], rec });
    }
  }
  return out;
}

/** An NDJSON answer, one record per line parsed. */
async function ndjsonRecords(query) {
  const r = await request(`${URL_}/v1/query?metric=${METRIC}${query}&format=ndjson`);
  if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
  answered(r.body);
  const out = [];
  for (const line of r.body.toString('utf8').split('\n')) {
    if (!line) continue;
    const o = JSON.parse(line);
    out.push({ machine: o.tags.machine, ts: o.ts, rec: o.fields });
  }
  return out;
}

/** The last JSON/NDJSON answer's size and hash (byte identity across builds). */
let lastAnswer = '';
function answered(body) {
  lastAnswer = `; ${body.length} B sha256 ${createHash('sha256').update(body).digest('hex').slice(0, 16)}`;
}

function deepSame(got, want) {
  if (got.length !== want.length) return false;
  const canon = (v) => (Array.isArray(v) ? v.map(canon) : v && typeof v === 'object' ? Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])])) : v);
  for (let i = 0; i < got.length; i++) if (got[i].ts !== want[i].ts || JSON.stringify(canon(got[i].rec)) !== JSON.stringify(canon(want[i].rec))) return false;
  return true;
}

const cmd = process.argv[2];
mkdirSync(WORK, { recursive: true });
if (cmd === 'load') await load();
else if (cmd === 'read') await read();
else {
  console.error('usage: records-r4.mjs load|read');
  process.exit(2);
}
