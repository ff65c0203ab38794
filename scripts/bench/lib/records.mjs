// Deterministic DirtMate-shaped records for the records workload (issue 11): N machines × 1 Hz,
// each record ~1.6–2 KB of JSON. Every machine has its own seeded PRNG and state, so one machine's
// records can be regenerated alone (the exactness check does that) and the dataset can be streamed
// in time order (second by second across all machines) without holding it in memory.
//
// A record (the sample's fields, top-level keys as S4 fields):
//   position: {lat, lon, alt}                                 float64, full precision (a slow random walk)
//   sats:     [{prn, elevation, azimuth, snr, used}] × 8–14   prn int; elevation/azimuth/snr float32-ish (0.1 steps)
//   imu:      {orientation:{roll,pitch,yaw}, accel:{x,y,z}, vibration}   float32-ish (Math.fround)
//   meta:     {fw, model, battery, charging}                  strings per machine, battery float32-ish, bool
//   diag:     [{code, msg}] × 1–3                             in about 1 record of 50 (absent otherwise)
import { prng } from './dataset.mjs';

export const MODELS = ['DM-400X', 'DM-520', 'DM-600 Pro', 'DM-220 Compact'];
const FW = ['4.12.3+build.20250611', '4.12.4+build.20250802', '4.13.0-rc2+build.20251003', '5.0.1+build.20251020'];
const DIAG = [
  [101, 'GNSS: fix degraded to float RTK'],
  [204, 'IMU: vibration above threshold on drum axis'],
  [305, 'battery: cell temperature high, charge current reduced'],
  [412, 'CAN bus: frame error counter incremented'],
  [518, 'hydraulics: pressure sensor reading out of range'],
];
const f32 = Math.fround;

export function machineName(m) {
  return `m${String(m).padStart(3, '0')}`;
}

/** Millisecond offset of a machine's clock inside each second (devices are not in phase). */
export function phase(m) {
  return Math.floor(prng(7_777_000 + m)() * 1000);
}

/**
 * Record generator of one machine: next() returns the record (a plain object) of the next second.
 * @param {number} m machine index
 */
export function machineGen(m, seed = 20251111) {
  const rnd = prng(seed * 1000 + m);
  const gauss = () => (rnd() + rnd() + rnd() + rnd() - 2) * 0.8660254;
  let lat = 47.2 + rnd() * 0.6;
  let lon = 8.1 + rnd() * 0.9;
  let alt = 380 + rnd() * 300;
  let heading = rnd() * 2 * Math.PI;
  let speed = 0; // m/s
  let battery = 40 + rnd() * 60;
  let charging = rnd() < 0.2;
  let yaw = rnd() * 360 - 180;
  const model = MODELS[m % MODELS.length];
  const fw = FW[Math.floor(rnd() * FW.length)];
  // a constellation of 24 satellites per machine; 8–14 of them visible, changing slowly
  const constellation = Array.from({ length: 24 }, (_, i) => ({
    prn: 1 + ((m * 7 + i * 3) % 32),
    elevation: 5 + rnd() * 80,
    azimuth: rnd() * 360,
    snr: 25 + rnd() * 25,
  }));
  let visible = 11 + Math.floor(rnd() * 4);
  let working = rnd() < 0.7;
  return {
    next() {
      // motion: the machine drives back and forth over a site, stopping now and then
      if (rnd() < 0.002) working = !working;
      speed = working ? Math.max(0, Math.min(3, speed + gauss() * 0.15)) : speed * 0.8;
      heading += gauss() * 0.05;
      lat += (Math.cos(heading) * speed) / 111_320;
      lon += (Math.sin(heading) * speed) / (111_320 * Math.cos((lat * Math.PI) / 180));
      alt += gauss() * 0.02;
      // 8–14 visible, drifting around 13 (open sky on a construction site)
      if (rnd() < 0.01) visible = Math.max(8, Math.min(14, visible + (rnd() < 0.5 + (13 - visible) * 0.12 ? 1 : -1)));
      const sats = [];
      for (let i = 0; i < visible; i++) {
        const s = constellation[i];
        s.elevation = Math.max(5, Math.min(89, s.elevation + gauss() * 0.01));
        s.azimuth = (s.azimuth + 0.004 + gauss() * 0.001 + 360) % 360;
        s.snr = Math.max(15, Math.min(52, s.snr + gauss() * 0.6));
        sats.push({ prn: s.prn, elevation: f32(Math.round(s.elevation * 10) / 10), azimuth: f32(Math.round(s.azimuth * 10) / 10), snr: f32(Math.round(s.snr * 10) / 10), used: s.snr > 30 && s.elevation > 10 });
      }
      const vib = working ? 0.4 + Math.abs(gauss()) * speed * 0.8 : Math.abs(gauss()) * 0.02;
      yaw = ((yaw + gauss() * 0.8 + 540) % 360) - 180;
      const imu = {
        orientation: { roll: f32(gauss() * 2.5), pitch: f32(gauss() * 3 + 1.2), yaw: f32(yaw) },
        accel: { x: f32(gauss() * 0.3 * (1 + speed)), y: f32(gauss() * 0.3 * (1 + speed)), z: f32(9.80665 + gauss() * 0.2 * (1 + speed)) },
        vibration: f32(vib),
      };
      if (charging) {
        battery = Math.min(100, battery + 0.004);
        if (battery >= 99.9 || rnd() < 0.0005) charging = false;
      } else {
        battery = Math.max(3, battery - (working ? 0.003 : 0.0005));
        if (battery < 15 || rnd() < 0.0002) charging = true;
      }
      const rec = { position: { lat, lon, alt }, sats, imu, meta: { fw, model, battery: f32(Math.round(battery * 100) / 100), charging } };
      if (rnd() < 0.02) {
        const n = 1 + Math.floor(rnd() * 3);
        rec.diag = Array.from({ length: n }, () => {
          const [code, msg] = DIAG[Math.floor(rnd() * DIAG.length)];
          return { code, msg };
        });
      }
      return rec;
    },
  };
}

/**
 * Plan of a records dataset.
 * @param {{machines:number, seconds:number, end:number}} o end: ms, exclusive (start of the current hour)
 */
export function plan({ machines, seconds, end }) {
  const start = end - seconds * 1000;
  return { machines, seconds, start, end, records: machines * seconds };
}

/**
 * Every record of the dataset in time order (second by second, machines in order within a second):
 * calls emit(machineIndex, ts, recordJsonText). The JSON text is what both systems are sent.
 */
export function forEachRecord(p, emit) {
  const gens = Array.from({ length: p.machines }, (_, m) => machineGen(m));
  const phases = Array.from({ length: p.machines }, (_, m) => phase(m));
  for (let i = 0; i < p.seconds; i++) {
    const base = p.start + i * 1000;
    for (let m = 0; m < p.machines; m++) emit(m, base + phases[m], JSON.stringify(gens[m].next()));
  }
}

/** The records of one machine within [from, to) as {ts, rec} with rec = JSON.parse(the text written). */
export function machineRecords(p, m, from = p.start, to = p.end) {
  const g = machineGen(m);
  const ph = phase(m);
  const out = [];
  for (let i = 0; i < p.seconds; i++) {
    const ts = p.start + i * 1000 + ph;
    const text = JSON.stringify(g.next());
    if (ts >= from && ts < to) out.push({ ts, rec: JSON.parse(text) });
  }
  return out;
}

/** Records expected in [from, to) for one machine (or all when m is undefined). */
export function countRecords(p, from, to, m) {
  let n = 0;
  for (let k = m ?? 0; k < (m === undefined ? p.machines : m + 1); k++) {
    const ph = phase(k);
    // i such that from <= start + i*1000 + ph < to
    const lo = Math.max(0, Math.ceil((from - p.start - ph) / 1000));
    const hi = Math.min(p.seconds, Math.ceil((to - p.start - ph) / 1000));
    n += Math.max(0, hi - lo);
  }
  return n;
}

/**
 * Deep equality of JSON values; object key order is ignored, array order is not.
 * Returns null when equal, else the path of the first difference with both values.
 */
export function jsonDiff(a, b, path = '') {
  if (a === b) return null;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return { path: path || '.', expected: a, actual: b };
  if (Array.isArray(a) !== Array.isArray(b)) return { path: path || '.', expected: a, actual: b };
  if (Array.isArray(a)) {
    if (a.length !== b.length) return { path: `${path}.length`, expected: a.length, actual: b.length };
    for (let i = 0; i < a.length; i++) {
      const d = jsonDiff(a[i], b[i], `${path}[${i}]`);
      if (d) return d;
    }
    return null;
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return { path: `${path}{keys}`, expected: ka.sort().join(','), actual: kb.sort().join(',') };
  for (const k of ka) {
    if (!Object.hasOwn(b, k)) return { path: `${path}.${k}`, expected: a[k], actual: undefined };
    const d = jsonDiff(a[k], b[k], `${path}.${k}`);
    if (d) return d;
  }
  return null;
}

/**
 * A function turning a `{"samples":[…]}` write body's samples into the body the SDK sends for them
 * (apps/sdk client.ts toColumns: one entry per series, a column per field, null where a sample
 * lacks it), MessagePack by the SDK's own Packr (apps/sdk codec.ts; after `npm run build`).
 */
export async function sdkMsgpackBodies() {
  const { packr } = await import(new URL('../../../apps/sdk/dist/esm/codec.js', import.meta.url).href);
  return (samples) => {
    const bySeries = new Map();
    for (const s of samples) {
      const key = `${s.metric}\u0000${JSON.stringify(s.tags)}`;
      let w = bySeries.get(key);
      if (!w) bySeries.set(key, (w = { metric: s.metric, tags: s.tags, ts: [], fields: {} }));
      const n = w.ts.length;
      w.ts.push(s.ts);
      for (const [f, v] of Object.entries(s.fields)) (w.fields[f] ??= new Array(n).fill(null)).push(v);
      for (const col of Object.values(w.fields)) if (col.length === n) col.push(null);
    }
    return packr.pack({ series: [...bySeries.values()] });
  };
}
