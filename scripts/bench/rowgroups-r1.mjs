// Companion of records-r4.mjs for row groups (issue 11), on the same kept data dir ($BENCH_WORK/r4-data):
//
//   node scripts/bench/rowgroups-r1.mjs flush   # start S4 on the dir, flush the hot tier (retrying a flush
//                                              # that lost its lease to the periodic one), write r4-plan.json
//                                              # (BENCH_MACHINES, BENCH_RECORD_MINUTES, BENCH_PLAN_END: the hour the load ended in)
//   node scripts/bench/rowgroups-r1.mjs compact # fold each window's parts into one (S4_COMPACT_SETTLE_MS=0), so blocks hold the hour
//   node scripts/bench/rowgroups-r1.mjs read    # R1: one machine × the whole range, as SDK records and as parsed JSON
//                                              # (BENCH_R1_VARIANTS: sdk,json; also proj, R3: imu.vibration projected, and field, R2: imu projected;
//                                              # sdkproj and sdkfield: the same two through the SDK)
//
// Same knobs as records-r4.mjs (BENCH_WORK, BENCH_S4_PORT, BENCH_S4_DIST, BENCH_SDK_DIST, BENCH_REPEATS);
// server CPU from /proc per query, client CPU from process.cpuUsage().
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { request } from './lib/http.mjs';
import { cpuMs, dirBytes, stop } from './lib/proc.mjs';
import { countRecords, machineName, plan } from './lib/records.mjs';
import { DATA, METRIC, ROOT, URL_, WORK, adminPass, num, readPlan, startS4 } from './lib/kept-records.mjs';

const env = process.env;
const log = (...a) => console.error(`[r1 ${new Date().toISOString().slice(11, 19)}]`, ...a);

async function flush(what = 'flush', extra = undefined) {
  const s4 = await startS4({ env: extra, log: 'r1-s4.log' });
  try {
    await adminPass(what, log);
  } finally {
    await stop(s4);
  }
  if (!existsSync(join(WORK, 'r4-plan.json'))) {
    const p = plan({ machines: num('BENCH_MACHINES', 300), seconds: num('BENCH_RECORD_MINUTES', 20) * 60, end: num('BENCH_PLAN_END', NaN) });
    if (!Number.isFinite(p.end)) throw new Error('BENCH_PLAN_END (ms) is needed to write the plan');
    writeFileSync(join(WORK, 'r4-plan.json'), JSON.stringify(p));
  }
  const seg = join(DATA, 'objects/v1/default/seg');
  const p = readPlan();
  const { bytes } = dirBytes(seg);
  if (existsSync(seg)) log(`segments: ${bytes} bytes, ${(bytes / p.records).toFixed(1)} bytes/record`);
}

async function read() {
  const p = readPlan();
  const range = { from: p.start, to: p.end };
  const machine = machineName(7);
  const expect = countRecords(p, range.from, range.to, 7);
  const { S4Client } = await import(env.BENCH_SDK_DIST || join(ROOT, 'apps/sdk/dist/esm/index.js'));
  const s4 = await startS4({ log: 'r1-s4.log' });
  const sdk = new S4Client({ url: URL_, retry: { retries: 1, minDelayMs: 0, maxDelayMs: 0 } });
  const projected = async (fields) => {
    const r = await request(`${URL_}/v1/query?metric=${METRIC}&tag=machine:${machine}&from=${range.from}&to=${range.to}&format=json&fields=${fields}`);
    if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
    return JSON.parse(r.body.toString('utf8')).series.flatMap((s) => s.ts);
  };
  const sdkRecords = async (fields) => {
    const out = [];
    for await (const chunk of sdk.records({ metric: METRIC, tags: { machine }, fields }, range)) for (const r of chunk.records()) out.push(r);
    return out;
  };
  const variants = {
    async sdk() {
      return sdkRecords(undefined);
    },
    async json() {
      const r = await request(`${URL_}/v1/query?metric=${METRIC}&tag=machine:${machine}&from=${range.from}&to=${range.to}&format=json`);
      if (r.status !== 200) throw new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`);
      const o = JSON.parse(r.body.toString('utf8'));
      return o.series.flatMap((s) => s.ts);
    },
    // R2 / R3 through the SDK: records holding the projected path only
    async sdkfield() {
      return sdkRecords(['imu']);
    },
    async sdkproj() {
      return sdkRecords(['imu.vibration']);
    },
    // R3: the same, one leaf projected
    async proj() {
      return projected('imu.vibration');
    },
    // R2: the same, one top-level field projected
    async field() {
      return projected('imu');
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
