#!/usr/bin/env node
// Soak: the built embedded server with its defaults (periodic flush and rollups on), fed at half
// of the capacity measured first, with queries mixed in, for SOAK_MINUTES (default 10). Prints
// RSS, open file descriptors and hot-tier bytes over time and checks, at the end, that every
// acknowledged sample reads back exactly once and that nothing grew without bound.
//
//   npm run build && npm run soak            # SOAK_MINUTES=2 npm run soak for a short one
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ok, request } from './bench/lib/http.mjs';
import { machine, memory, start, stop } from './bench/lib/proc.mjs';

const MINUTES = Number(process.env.SOAK_MINUTES ?? 10);
const PORT = Number(process.env.SOAK_PORT ?? 20_000 + Math.floor(Math.random() * 10_000));
const SERIES = 2_000;
const BATCH = 2_000;
const H = 3_600_000;
const main = fileURLToPath(new URL('../apps/api/dist/main.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 's4-soak-'));
const url = `http://127.0.0.1:${PORT}`;
const server = start(process.execPath, [main], { env: { PATH: process.env.PATH, S4_DATA_DIR: dir, S4_PORT: String(PORT), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn' }, log: join(dir, 'server.log') });

const fds = () => {
  try {
    return readdirSync(`/proc/${server.pid}/fd`).length;
  } catch {
    return NaN;
  }
};
const hotBytes = async () => Number(/^s4_hot_tier_bytes (\S+)/m.exec((await ok(`${url}/metrics`)).body.toString())?.[1] ?? NaN);

for (let i = 0; ; i++) {
  try {
    if ((await request(`${url}/readyz`)).status === 200) break;
  } catch {
    // not up yet
  }
  if (server.exitCode !== null) throw new Error(`the server exited with ${server.exitCode} (port ${PORT} taken? see ${dir}/server.log)`);
  if (i > 300) throw new Error('server did not start');
  await new Promise((r) => setTimeout(r, 100));
}

// Most samples arrive live (timestamps now, per series strictly increasing); one in five is late
// data for an hour that is already closed, so flushes write late parts while we write. Every
// timestamp is unique per series by construction, so "exactly once" is countable.
const t00 = Date.now();
const lateBase = Math.floor((t00 - 2 * H) / H) * H;
const lastLive = new Float64Array(SERIES);
const lateCount = new Float64Array(SERIES);
let seq = 0;
let acked = 0;
const batch = () => {
  const series = [];
  for (let s = 0; s < BATCH / 10; s++) {
    const id = seq++ % SERIES;
    const late = seq % 5 === 0;
    const ts = [];
    for (let k = 0; k < 10; k++) {
      if (late) ts.push(lateBase + (lateCount[id]++ % 36_000) * 100 + (Math.floor(lateCount[id] / 36_000) % 100));
      else ts.push((lastLive[id] = Math.max(Date.now(), lastLive[id] + 1)));
    }
    series.push({ metric: 'soak', tags: { s: String(id) }, ts, fields: { value: ts.map((_, k) => k) } });
  }
  return JSON.stringify({ series });
};
const write = async () => {
  await ok(`${url}/v1/write`, { body: batch(), headers: { 'content-type': 'application/json' } });
  acked += BATCH;
};

// Capacity: 4 writers flat out for 15 s.
const t0 = performance.now();
let stopAt = Date.now() + 15_000;
await Promise.all(Array.from({ length: 4 }, async () => { while (Date.now() < stopAt) await write(); }));
const capacity = acked / ((performance.now() - t0) / 1000);
const rate = capacity / 2;
console.log(`machine ${JSON.stringify(machine())}; capacity ${Math.round(capacity)} samples/s; soaking at ${Math.round(rate)} samples/s for ${MINUTES} min`);

const rows = [];
let queries = 0;
let queryErrors = 0;
stopAt = Date.now() + MINUTES * 60_000;
const started = Date.now();
const writer = (async () => {
  while (Date.now() < stopAt) {
    const due = started + ((acked - capacity * 15) / rate) * 1000;
    if (Date.now() < due) await new Promise((r) => setTimeout(r, due - Date.now()));
    await write();
  }
})();
const reader = (async () => {
  while (Date.now() < stopAt) {
    const now = Date.now();
    const s = Math.floor(Math.random() * SERIES);
    const r = await request(`${url}/v1/query?metric=soak&tag=s:${s}&from=${now - 4 * H}&to=${now}&format=msgpack`).catch(() => ({ status: 0 }));
    const r2 = await request(`${url}/v1/query?metric=soak&from=${now - 4 * H}&to=${now}&step=1m&agg=avg,max`).catch(() => ({ status: 0 }));
    queries += 2;
    if (r.status !== 200 || r2.status !== 200) queryErrors++;
    await new Promise((res) => setTimeout(res, 250));
  }
})();
const sampler = (async () => {
  while (Date.now() < stopAt) {
    await new Promise((r) => setTimeout(r, 30_000));
    const m = memory(server.pid);
    const row = { min: ((Date.now() - started) / 60_000).toFixed(1), rssMiB: Math.round((m?.rss ?? NaN) / 2 ** 20), fds: fds(), hotMiB: +((await hotBytes()) / 2 ** 20).toFixed(1), acked, queries, queryErrors };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
})();
await Promise.all([writer, reader, sampler]);

// Every acknowledged sample, exactly once.
const now = Date.now();
// Counted by the server per series (count of the merged, de-duplicated samples): the raw answer
// would be larger than a string can hold.
const span = Math.ceil((now + 60_000 - lateBase) / H) * H;
const got = JSON.parse((await ok(`${url}/v1/query?metric=soak&from=${lateBase}&to=${lateBase + span}&step=${span}&agg=count`)).body.toString());
let lines = 0;
for (const s of got.series) for (const c of s.fields['count(value)']) lines += c ?? 0;
await stop(server);
rmSync(dir, { recursive: true, force: true });

const half = Math.floor(rows.length / 2);
const avg = (rs, k) => rs.reduce((n, r) => n + r[k], 0) / Math.max(1, rs.length);
const verdict = {
  acknowledged: acked,
  readBack: lines,
  queryErrors,
  rssFirstHalfMiB: Math.round(avg(rows.slice(0, half), 'rssMiB')),
  rssSecondHalfMiB: Math.round(avg(rows.slice(half), 'rssMiB')),
  fdsFirst: rows[0]?.fds,
  fdsLast: rows.at(-1)?.fds,
  hotMaxMiB: Math.max(...rows.map((r) => r.hotMiB)),
};
console.log(JSON.stringify(verdict));
const failures = [];
if (lines !== acked) failures.push(`read back ${lines} of ${acked} acknowledged samples`);
if (queryErrors > 0) failures.push(`${queryErrors} failed queries`);
if (rows.length >= 4 && verdict.rssSecondHalfMiB > verdict.rssFirstHalfMiB * 1.5) failures.push('RSS grew by more than half between the halves');
if (rows.length >= 2 && verdict.fdsLast > verdict.fdsFirst + 20) failures.push('file descriptors leak');
if (failures.length) {
  console.error(`soak FAILED: ${failures.join('; ')}`);
  process.exit(1);
}
console.log('soak passed');
