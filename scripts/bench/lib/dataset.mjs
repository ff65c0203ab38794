// Deterministic benchmark dataset: N sensors × 1 Hz × H hours of a random-walk float with two
// decimals, ~1 % jittered timestamps (± up to 400 ms) and ~0.5 % gaps (short runs of missing
// seconds). Generated in memory, columnar per sensor; both systems are loaded from these arrays.

/** mulberry32: small, fast, seedable PRNG (uniform in [0, 1)). */
export function prng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export const HOUR = 3_600_000;

/**
 * @param {{sensors:number, hours:number, start:number, seed?:number}} o  start: ms, hour-aligned
 * @returns {{start:number,end:number,sensors:{name:string,ts:Float64Array,value:Float64Array}[],samples:number,jittered:number,missing:number}}
 */
export function generate({ sensors, hours, start, seed = 20240601 }) {
  const seconds = hours * 3600;
  const end = start + hours * HOUR;
  const out = [];
  let samples = 0;
  let jittered = 0;
  let missing = 0;
  for (let s = 0; s < sensors; s++) {
    const rnd = prng(seed * 1000 + s);
    const ts = new Float64Array(seconds);
    const value = new Float64Array(seconds);
    let v = 20 + (s % 40) + Math.round(rnd() * 1000) / 100;
    let n = 0;
    let gapLeft = 0;
    for (let i = 0; i < seconds; i++) {
      v += (rnd() - 0.5) * 0.4;
      const r = rnd();
      if (gapLeft > 0) {
        gapLeft--;
        missing++;
        continue;
      }
      if (r < 0.0005) {
        // a gap of 1..19 missing seconds, mean 10: 0.05 % × 10 ≈ 0.5 % missing
        gapLeft = 1 + Math.floor(rnd() * 19) - 1;
        missing++;
        continue;
      }
      let t = start + i * 1000;
      if (r > 0.99) {
        const j = Math.round((rnd() * 2 - 1) * 400);
        t = Math.min(end - 1, Math.max(start, t + j));
        jittered++;
      }
      ts[n] = t;
      value[n] = Math.round(v * 100) / 100;
      n++;
    }
    out.push({ name: `s${String(s).padStart(3, '0')}`, ts: ts.subarray(0, n), value: value.subarray(0, n) });
    samples += n;
  }
  return { start, end, sensors: out, samples, jittered, missing };
}

/** Index of the first element >= x in a sorted Float64Array. */
export function lowerBound(a, x) {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const m = (lo + hi) >>> 1;
    if (a[m] < x) lo = m + 1;
    else hi = m;
  }
  return lo;
}

/**
 * Ingest batches in time order: for each hour, groups of sensors so one batch holds about
 * `target` samples. Every system gets exactly these batches.
 * @returns {{hour:number, parts:{name:string, ts:Float64Array, value:Float64Array}[], samples:number}[]}
 */
export function batches(ds, target) {
  const perBatch = Math.max(1, Math.round(target / 3600));
  const hours = Math.round((ds.end - ds.start) / HOUR);
  const out = [];
  for (let h = 0; h < hours; h++) {
    const from = ds.start + h * HOUR;
    const to = from + HOUR;
    for (let g = 0; g < ds.sensors.length; g += perBatch) {
      const parts = [];
      let samples = 0;
      for (const s of ds.sensors.slice(g, g + perBatch)) {
        const i = lowerBound(s.ts, from);
        const j = lowerBound(s.ts, to);
        if (j > i) {
          parts.push({ name: s.name, ts: s.ts.subarray(i, j), value: s.value.subarray(i, j) });
          samples += j - i;
        }
      }
      if (samples > 0) out.push({ hour: h, parts, samples });
    }
  }
  return out;
}

/** Samples of one sensor (or all) within [from, to): the expected answer of a raw query. */
export function countRange(ds, from, to, sensor) {
  let n = 0;
  for (const s of ds.sensors) {
    if (sensor && s.name !== sensor) continue;
    n += lowerBound(s.ts, to) - lowerBound(s.ts, from);
  }
  return n;
}
