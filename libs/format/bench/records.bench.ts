/**
 * Nested-record format figures (not a timed test). Build first, then run on the compiled output:
 *   npx tsc -b libs/format/tsconfig.build.json && node libs/format/bench/records.bench.ts
 * Prints, for realistic GPS records (src/testing/gps.ts): bytes/record of segment v1, v2 and
 * gzip'd NDJSON; encode and decode MB/s (MB of record JSON per second); the cost of reading one
 * projected path against the whole record; footer bytes per series of both versions.
 */
import { cpus, loadavg } from 'node:os';
import { gzipSync } from 'node:zlib';
import { assemble, columnRanges, columnWriter, decodeBlockColumns, JsonBytes, decodeFooter, decodeSegment, encodeSegment, readTrailer } from '../dist/index.js';
import { gpsRecords, toColumns } from '../src/testing/gps.ts';

type Input = Parameters<typeof encodeSegment>[0];
const COMMA = Uint8Array.of(0x2c);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[s.length >> 1]!;
}

/** Median ms of `runs` runs after `warm` warm-up runs. */
function time(fn: () => unknown, runs = 15, warm = 5): number {
  const t: number[] = [];
  for (let r = 0; r < runs + warm; r++) {
    const a = performance.now();
    fn();
    if (r >= warm) t.push(performance.now() - a);
  }
  return median(t);
}

function footerOf(bytes: Uint8Array) {
  const t = readTrailer(bytes);
  return { length: t.footerLength, footer: decodeFooter(bytes.subarray(t.footerOffset, t.footerOffset + t.footerLength)) };
}

console.log(`node ${process.version}, ${cpus()[0]?.model ?? 'cpu'} ×${cpus().length}, load ${loadavg()[0]!.toFixed(1)}, ${new Date().toISOString()}`);

const sizes = [];
const speeds = [];
const projections = [];
for (const n of [300, 3600]) {
  const { ts, records } = gpsRecords(n);
  const fields = toColumns(records);
  const input: Input = { ns: 'bench', shard: 0, window: 0, series: [{ id: 'dm-000421', metric: 'machine.gps', tags: { site: 'quarry' }, ts, fields: fields as never }] };
  const ndjson = records.map((r) => JSON.stringify(r)).join('\n');
  const mb = Buffer.byteLength(ndjson) / 1e6;
  const v1 = encodeSegment(input, { version: 1 });
  const v2 = encodeSegment(input);
  sizes.push({
    records: n,
    'JSON B/rec': Math.round(Buffer.byteLength(ndjson) / n),
    'gzip NDJSON B/rec': +(gzipSync(ndjson).length / n).toFixed(1),
    'v1 B/rec': +(v1.length / n).toFixed(1),
    'v2 B/rec': +(v2.length / n).toFixed(1),
    'v2 never-shred B/rec': +(encodeSegment(input, { shred: 'never' }).length / n).toFixed(1),
  });
  const rebuild = (s: ReturnType<typeof decodeSegment>['series'][number]) => {
    // What a reader that wants records does: one object per sample.
    const names = Object.keys(s.fields);
    for (let i = 0; i < s.ts.length; i++) {
      const r: Record<string, unknown> = {};
      for (const k of names) if (s.fields[k]![i] !== null) r[k] = s.fields[k]![i];
    }
  };
  const encV1 = time(() => encodeSegment(input, { version: 1 }));
  const encV2 = time(() => encodeSegment(input));
  const decV1 = time(() => rebuild(decodeSegment(v1).series[0]!));
  const decV2 = time(() => rebuild(decodeSegment(v2).series[0]!));
  speeds.push({
    records: n,
    'v1 encode MB/s': +(mb / (encV1 / 1000)).toFixed(1),
    'v2 encode MB/s': +(mb / (encV2 / 1000)).toFixed(1),
    'v1 decode MB/s': +(mb / (decV1 / 1000)).toFixed(1),
    'v2 decode MB/s': +(mb / (decV2 / 1000)).toFixed(1),
    'JSON.parse MB/s': +(mb / (time(() => ndjson.split('\n').map((l) => JSON.parse(l) as unknown)) / 1000)).toFixed(1),
  });
  const { footer } = footerOf(v2);
  const e = footer.series[0]!;
  for (const paths of [undefined, ['imu.vibration.rms'], ['sats.prn'], ['position.lat', 'position.lon']]) {
    const ranges = columnRanges(e, paths);
    const bytes = ranges.reduce((a, r) => a + r.length, 0);
    const values = time(() => assemble(decodeBlockColumns(v2, e, paths, 0)));
    const json = time(() => {
      const cols = decodeBlockColumns(v2, e, paths, 0);
      const out = new JsonBytes();
      for (const f of cols.fields.keys()) {
        const next = columnWriter(cols, f);
        for (let i = 0; i < cols.ts.length; i++) next(out, COMMA);
      }
      out.end();
    });
    projections.push({
      records: n,
      paths: paths?.join(',') ?? '(whole record)',
      'bytes read': bytes,
      'of block': `${((100 * bytes) / e.length).toFixed(1)}%`,
      'ranges (unmerged gaps)': ranges.length,
      'decode+assemble ms': +values.toFixed(2),
      'decode+JSON text ms': +json.toFixed(2),
    });
  }
}
console.log('Bytes per record (segment object, footer included)');
console.table(sizes);
console.log('Speed, MB of record JSON per second (decode includes building one object per record)');
console.table(speeds);
console.log('Projection: bytes a ranged read fetches and time to decode them');
console.table(projections);

// Footer bytes per series: 10,000 one-field metric series of 60 samples, and 500 record series.
const footers = [];
{
  const series = Array.from({ length: 10_000 }, (_, i) => ({
    id: `m${String(i).padStart(8, '0')}`,
    metric: `cpu.usage`,
    tags: { host: `web-${i}`, region: `r${i % 8}` },
    ts: Array.from({ length: 60 }, (_, k) => k * 60_000),
    fields: { value: Array.from({ length: 60 }, (_, k) => Math.round(5000 + Math.sin(i + k / 5) * 2500) / 100) },
  }));
  const input: Input = { ns: 'bench', shard: 0, window: 0, series };
  for (const version of [1, 2] as const) {
    const bytes = encodeSegment(input, { version });
    const f = footerOf(bytes);
    footers.push({ data: '10,000 metric series (1 field)', version, 'footer bytes': f.length, 'footer B/series': +(f.length / 10_000).toFixed(1), 'object B/series': +(bytes.length / 10_000).toFixed(1) });
  }
}
{
  const series = Array.from({ length: 500 }, (_, i) => {
    const { ts, records } = gpsRecords(60, i + 1);
    return { id: `dm-${String(i).padStart(6, '0')}`, metric: 'machine.gps', tags: { device: `dm-${i}` }, ts, fields: toColumns(records) as never };
  });
  const input: Input = { ns: 'bench', shard: 0, window: 0, series };
  for (const version of [1, 2] as const) {
    const bytes = encodeSegment(input, { version });
    const f = footerOf(bytes);
    footers.push({ data: '500 GPS record series (60 records)', version, 'footer bytes': f.length, 'footer B/series': +(f.length / 500).toFixed(1), 'object B/series': +(bytes.length / 500).toFixed(1) });
  }
}
console.log('Footer size');
console.table(footers);
