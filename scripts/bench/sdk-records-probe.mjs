// Client side of R4 alone (issue 11): a saved MessagePack answer (`curl -H 'accept: application/msgpack;
// columns=2' .../v1/query?...&format=msgpack -o FILE`) fed to the SDK's stream decoder in 64 KiB pieces, its
// records built and held as records-r4.mjs's `sdk` variant holds them; CPU, wall and heap per round.
//
//   node --expose-gc scripts/bench/sdk-records-probe.mjs FILE [rounds=7] [mode=held|built|column]
// BENCH_SDK_DIST: the SDK's dist/esm directory of another checkout (the "before").
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dist = process.env.BENCH_SDK_DIST || join(root, 'apps/sdk/dist/esm');
const { MsgpackStreamDecoder, checkColumn } = await import(join(dist, 'codec.js'));
const { toRecordBatch } = await import(join(dist, 'records.js'));
const [file, roundsArg = '7', mode = 'held'] = process.argv.slice(2);
const bytes = readFileSync(file);
const rounds = Number(roundsArg);

function once() {
  const decoder = new MsgpackStreamDecoder();
  const out = [];
  for (let at = 0; at < bytes.length; at += 65536) {
    // a fresh copy per piece, as the network hands them over
    const piece = new Uint8Array(bytes.subarray(at, at + 65536));
    for (const value of decoder.push(piece)) {
      const chunk = toRecordBatch(value, checkColumn);
      if (mode === 'column') {
        const col = chunk.column('imu.vibration');
        for (let i = 0; i < chunk.length; i++) out.push({ ts: chunk.ts[i], v: col[i] });
      } else if (mode === 'built') {
        for (const r of chunk.records()) if (r.fields) out.push(0);
      } else {
        const machine = chunk.tags.machine;
        for (const r of chunk.records()) out.push({ machine, ts: r.ts, rec: r.fields });
      }
    }
  }
  decoder.end();
  return out;
}

const rows = [];
for (let i = 0; i < rounds; i++) {
  globalThis.gc?.();
  const h0 = process.memoryUsage().heapUsed;
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const out = once();
  const wall = performance.now() - t0;
  const c = process.cpuUsage(c0);
  globalThis.gc?.();
  const heap = (process.memoryUsage().heapUsed - h0) / out.length;
  if (i === 0) console.log(`${out.length} records`);
  out.length = 0;
  rows.push({ wall, cpu: (c.user + c.system) / 1000, heap });
}
const med = (k) => rows.slice(1).map((r) => r[k]).sort((a, b) => a - b)[(rows.length - 1) >> 1];
console.log(`${mode}: wall ${med('wall').toFixed(0)} ms (${rows.map((r) => r.wall.toFixed(0)).join(' ')}), CPU ${med('cpu').toFixed(0)} ms (${rows.map((r) => r.cpu.toFixed(0)).join(' ')}), heap held ${med('heap').toFixed(0)} B/record`);
