/**
 * Codec micro-benchmark. Build first, then run on the compiled output (Node strips the types):
 *   npx tsc -b libs/format && node libs/format/bench/codec.bench.ts
 * Prints bytes/sample and encode/decode ns/sample (median of runs) per data set.
 */
import { cpus, loadavg } from 'node:os';
import { ByteWriter } from '../dist/codec/bytes.js';
import { encodeDecimal } from '../dist/codec/decimal.js';
import { encodeGorilla } from '../dist/codec/gorilla.js';
import { decodeBlock, encodeBlock } from '../dist/index.js';

type Fields = Record<string, unknown[]>;

function mulberry32(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rnd = mulberry32(42);
const gauss = () => Math.sqrt(-2 * Math.log(rnd() || 1e-12)) * Math.cos(2 * Math.PI * rnd());
const round2 = (x: number) => Math.round(x * 100) / 100;

const DAY = 86_400;
const T0 = 1_763_769_600_000;
// 1 Hz with ~1% jitter: each timestamp lands within ±10 ms of its second.
const ts = Array.from({ length: DAY }, (_, i) => T0 + i * 1000 + Math.round((rnd() - 0.5) * 20));

let walk = 100;
const rawWalk = Array.from({ length: DAY }, () => (walk += gauss() * 0.5));
const decimals = rawWalk.map(round2);
const randoms = Array.from({ length: DAY }, () => rnd() * 1000);

function iotRecords(n: number): Fields {
  const f: Fields = {};
  const put = (k: string, v: unknown) => (f[k] ??= []).push(v);
  const state = { temp: 21, hum: 45, volt: 3.3, energy: 0, packets: 0 };
  for (let i = 0; i < n; i++) {
    state.temp += gauss() * 0.05;
    state.hum += gauss() * 0.1;
    state.energy += Math.round(rnd() * 5);
    state.packets += 1 + Math.round(rnd());
    for (let s = 0; s < 16; s++) put(`temp_${s}`, round2(state.temp + s * 0.1 + gauss() * 0.02));
    put('humidity', round2(state.hum));
    put('voltage', Math.round((state.volt + gauss() * 0.01) * 1000) / 1000);
    put('energy_wh', state.energy);
    put('packets', state.packets);
    put('rssi', -60 - Math.round(rnd() * 20));
    put('status', ['ok', 'ok', 'ok', 'degraded', 'ok'][i % 5]);
    put('firmware', 'v4.2.1-rc3');
    put('site', 'plant-7/line-3/cell-12');
    put('door_open', rnd() < 0.01);
    put('spectrum', Array.from({ length: 200 }, (_, k) => round2(Math.sin(k / 8 + i / 100) * 40 + gauss())));
    put('gps', { lat: 48.8566 + gauss() * 1e-5, lon: 2.3522 + gauss() * 1e-5, fix: '3d' });
  }
  return f;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

function bench(name: string, t: number[], fields: Fields, level?: number, runs = 25) {
  const n = t.length;
  let block = encodeBlock(t, fields as never, level);
  const enc: number[] = [];
  const dec: number[] = [];
  for (let r = 0; r < runs + 10; r++) {
    const a = performance.now();
    block = encodeBlock(t, fields as never, level);
    const b = performance.now();
    decodeBlock(block);
    const c = performance.now();
    if (r >= 10) {
      enc.push(b - a);
      dec.push(c - b);
    }
  }
  const row = {
    data: name,
    samples: n,
    bytes: block.length,
    'bytes/sample': +(block.length / n).toFixed(3),
    'enc ns/sample': Math.round((median(enc) * 1e6) / n),
    'dec ns/sample': Math.round((median(dec) * 1e6) / n),
    'enc ms': +median(enc).toFixed(2),
    'dec ms': +median(dec).toFixed(2),
  };
  return row;
}

function floatChoice(name: string, values: number[]) {
  const w = new ByteWriter();
  const decimal = encodeDecimal(values, w) ? w.pos : null;
  const gorilla = encodeGorilla(values).length;
  return { data: name, 'decimal bytes (pre-zstd)': decimal ?? 'n/a', 'gorilla bytes (pre-zstd)': gorilla };
}

console.log(`node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);
const iot = iotRecords(3600);
const iotJson = Buffer.byteLength(JSON.stringify(Array.from({ length: 3600 }, (_, i) => Object.fromEntries(Object.entries(iot).map(([k, v]) => [k, v[i]])))));
console.table([
  bench('(a) 2-decimal random walk, 1 Hz ±1% jitter', ts, { value: decimals }),
  bench('(b) raw double random walk, same ts', ts, { value: rawWalk }),
  bench('(b2) uniform random doubles, same ts', ts, { value: randoms }),
  bench('timestamps only', ts, {}),
  bench('(c) IoT record ×3600 (per record)', ts.slice(0, 3600), iot),
]);
console.log(`(c) IoT record as JSON: ${(iotJson / 3600).toFixed(0)} bytes/record`);
console.table([floatChoice('(a) 2-decimal walk', decimals), floatChoice('(b) raw walk', rawWalk), floatChoice('(b2) uniform', randoms)]);
console.table([1, 3, 6, 9, 19].map((level) => ({ level, ...bench('(a)', ts, { value: decimals }, level, 5), ...{ iot: bench('(c)', ts.slice(0, 3600), iot, level, 5)['bytes/sample'] } })));
