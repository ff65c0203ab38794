// Row groups (issue 11, R4): bytes at rest and decode CPU of a 10-minute range of hour blocks of
// DirtMate records, version 2 blocks against version 3 (row groups), in-process, no server.
//
//   node scripts/bench/rowgroups-format.mjs          # BENCH_MACHINES (20) × 60 min; BENCH_GROUP_ROWS (256,512,1024)
//
// Per variant: bytes/record of the segment; CPU ms to decode every block's samples in [20 min,
// 30 min), and the whole hour, and assemble them as records (median of BENCH_REPEATS, default 5).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { machineGen, phase } from './lib/records.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const F = await import(join(ROOT, 'libs/format/dist/index.js'));
const env = process.env;
const machines = Number(env.BENCH_MACHINES || 20);
const repeats = Number(env.BENCH_REPEATS || 5);
const groupRows = (env.BENCH_GROUP_ROWS || '256,512,1024').split(',').map(Number);
const H = 1_763_784_000_000;
const NAMES = ['position', 'sats', 'imu', 'meta', 'diag'];

const series = [];
for (let m = 0; m < machines; m++) {
  const g = machineGen(m);
  const ts = [];
  const fields = Object.fromEntries(NAMES.map((n) => [n, []]));
  for (let i = 0; i < 3600; i++) {
    const r = JSON.parse(JSON.stringify(g.next()));
    ts.push(H + i * 1000 + phase(m));
    for (const n of NAMES) fields[n].push(Object.hasOwn(r, n) ? r[n] : null);
  }
  series.push({ id: `m${String(m).padStart(15, '0')}`, metric: 'machine.record', tags: { machine: `m${m}` }, ts, fields });
}
const input = { ns: 'default', shard: 0, window: H, series };
const records = machines * 3600;
const from = H + 20 * 60_000;
const to = from + 10 * 60_000;

function cpu(fn) {
  const rows = [];
  for (let i = 0; i < repeats + 1; i++) {
    globalThis.gc?.();
    const c0 = process.cpuUsage();
    fn();
    const c = process.cpuUsage(c0);
    if (i > 0) rows.push((c.user + c.system) / 1000);
  }
  return rows.sort((a, b) => a - b)[rows.length >> 1];
}

function lowerBound(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (a[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function readRange(bytes, from, to, expect) {
  const { footer } = { footer: F.decodeSegment(bytes).footer };
  return () => {
    let n = 0;
    for (const e of footer.series) {
      for (const g of F.groupsOf(e, from, to)) {
        const cols = g < 0 ? F.decodeBlockColumns(bytes, e, undefined, 0) : F.decodeGroupColumns(bytes, e, g, undefined, 0);
        const lo = lowerBound(cols.ts, from);
        const hi = lowerBound(cols.ts, to);
        if (hi > lo) n += F.assemble(F.sliceColumns(cols, lo, hi)).ts.length;
      }
    }
    if (n !== expect) throw new Error(`read ${n} records`);
  };
}

const variants = [['v2', { version: 2 }], ...groupRows.map((g) => [`v3 groupRows=${g}`, { version: 3, groupRows: g }])];
for (const [name, opts] of variants) {
  const t0 = process.cpuUsage();
  const bytes = F.encodeSegment(input, opts);
  const enc = process.cpuUsage(t0);
  const spans = new Set(F.decodeSegment(bytes).footer.series.map((e) => e.directory.layout.groups?.span ?? 0));
  const read = cpu(readRange(bytes, from, to, machines * 600));
  const whole = cpu(readRange(bytes, H, H + 3_600_000, machines * 3600));
  console.log(`${name.padEnd(18)} ${(bytes.length / records).toFixed(1)} B/record; span ${[...spans].map((s) => s / 60000 + ' min')}; encode ${((enc.user + enc.system) / 1000).toFixed(0)} ms; decode 10 min of ${machines} hour blocks ${read.toFixed(1)} ms CPU, the whole hour ${whole.toFixed(1)} ms; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
}
