/**
 * Test and benchmark helper (excluded from the build, no imports so that node can run it from
 * the bench by stripping types): realistic records of a GPS-tracked machine, one per second,
 * ~1.7 KB as JSON. Position as float64 degrees (7 decimals, i.e. ~1 cm), 8–14 visible satellites
 * whose set changes slowly, IMU readings as a device prints float32s (7 significant digits),
 * device metadata strings/booleans, and an occasional diagnostics list.
 */
export type GpsRecord = Record<string, unknown>;

function mulberry32(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const f32 = (x: number) => Number(Math.fround(x).toPrecision(7));
const round = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

export function gpsRecords(n: number, seed = 7): { ts: number[]; records: GpsRecord[] } {
  const rnd = mulberry32(seed);
  const gauss = () => Math.sqrt(-2 * Math.log(rnd() || 1e-12)) * Math.cos(2 * Math.PI * rnd());
  const t0 = 1_763_784_000_000;
  let lat = -33.8688197;
  let lon = 151.2092955;
  let alt = 42.31;
  let heading = 90;
  let speed = 4.2;
  let battery = 87;
  let uptime = 1_234_567;
  // 32 satellites on slow arcs; a satellite is visible while its elevation is above 5°.
  const sats = Array.from({ length: 30 }, (_, k) => ({ prn: k + 1, el: rnd() * 180 - 90, az: rnd() * 360, dEl: (rnd() - 0.5) * 0.06, dAz: (rnd() - 0.5) * 0.04 }));
  const ts: number[] = [];
  const records: GpsRecord[] = [];
  for (let i = 0; i < n; i++) {
    ts.push(t0 + i * 1000 + Math.round((rnd() - 0.5) * 20));
    heading = (heading + gauss() * 2 + 360) % 360;
    speed = Math.max(0, speed + gauss() * 0.2);
    lat += (Math.cos((heading * Math.PI) / 180) * speed) / 111_000;
    lon += (Math.sin((heading * Math.PI) / 180) * speed) / 92_000;
    alt += gauss() * 0.05;
    if (i % 120 === 119) battery = Math.max(5, battery - 1);
    uptime += 1;
    const visible = [];
    for (const s of sats) {
      s.el += s.dEl;
      s.az = (s.az + s.dAz + 360) % 360;
      if (s.el > 17 && visible.length < 14) {
        visible.push({
          prn: s.prn,
          elevation: round(s.el, 1),
          azimuth: round(s.az, 1),
          snr: Math.max(10, Math.round(20 + s.el / 3 + gauss() * 1.5)),
          used: s.el > 28,
        });
      }
    }
    const vib = Math.abs(gauss()) * 0.3 + speed * 0.05;
    const record: GpsRecord = {
      position: {
        lat: round(lat + gauss() * 2e-7, 7),
        lon: round(lon + gauss() * 2e-7, 7),
        alt: round(alt, 2),
        speed: round(speed, 2),
        heading: round(heading, 1),
        hdop: round(0.7 + Math.abs(gauss()) * 0.1, 2),
        fix: i % 97 === 50 ? 'rtk-float' : 'rtk-fixed',
        accuracy: round(0.01 + Math.abs(gauss()) * 0.004, 3),
      },
      sats: visible,
      imu: {
        accel: { x: f32(gauss() * 0.2), y: f32(gauss() * 0.2), z: f32(9.80665 + gauss() * 0.1) },
        gyro: { x: f32(gauss() * 0.01), y: f32(gauss() * 0.01), z: f32(((heading - 90) / 180) * 0.01 + gauss() * 0.01) },
        mag: { x: f32(22.5 + gauss() * 0.3), y: f32(-5.1 + gauss() * 0.3), z: f32(-48.7 + gauss() * 0.3) },
        orientation: { roll: f32(gauss() * 1.5), pitch: f32(gauss() * 2), yaw: f32(heading) },
        vibration: { rms: f32(vib), peak: f32(vib * (2.5 + rnd())), dominantHz: f32(12 + speed * 2 + gauss()) },
        temperature: round(38 + gauss() * 0.2, 1),
      },
      meta: {
        device: 'dirtmate-000421',
        fw: '4.12.3',
        hw: 'rev-c',
        battery,
        charging: false,
        network: i % 300 < 280 ? 'lte' : '3g',
        rssi: -70 - Math.round(Math.abs(gauss()) * 6),
        uptime,
        site: 'site-0042/quarry-north',
        operator: 'op-117',
        ignition: true,
        engineHours: round(4123.5 + i / 3600, 3),
      },
    };
    if (i % 37 === 5) {
      record['diag'] = [
        { code: 'GNSS_MULTIPATH', level: 2, detail: { sats: visible.slice(0, 3).map((s) => s.prn) } },
        ...(i % 74 === 5 ? [{ code: 'IMU_SATURATION', level: 1 }] : []),
      ];
    }
    records.push(record);
  }
  return { ts, records };
}

/** Records as field columns (top-level keys become fields; a record without a key has null there). */
export function toColumns(records: readonly GpsRecord[]): Record<string, unknown[]> {
  const names = new Set<string>();
  for (const r of records) for (const k of Object.keys(r)) names.add(k);
  const out: Record<string, unknown[]> = {};
  for (const k of names) out[k] = records.map((r) => (Object.hasOwn(r, k) ? r[k] : null));
  return out;
}
