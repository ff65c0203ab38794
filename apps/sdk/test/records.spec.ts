// client.records() against the real S4 server in embedded mode: nested records read back as
// lazily built records and as columns, projected, and pulled from the connection as consumed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packr } from '../src/codec.js';
import { S4Client, type FieldValue, type Sample } from '../src/index.js';
import { removeDir, startEmbedded, type Embedded } from './embedded.js';

const HOUR = 3_600_000;
const base = Math.floor(Date.now() / HOUR) * HOUR - 3 * HOUR;

/** Records of changing shape: a diag list now and then, a key that comes and goes, a type that changes, unicode keys. */
function record(m: number, i: number): Record<string, FieldValue> {
  const sats = Array.from({ length: 3 + ((i + m) % 4) }, (_, k) => ({ prn: k + m, snr: 20 + ((i * 7 + k) % 30) / 10, used: (i + k) % 3 !== 0 }));
  const rec: Record<string, FieldValue> = {
    position: { lat: 47.1 + i * 1e-6, lon: 8.2 - m * 1e-5 },
    sats,
    imu: { vibration: Math.fround(0.5 + (i % 17) / 10), ...(i % 5 === 0 ? { note: 'bump' } : {}) },
    meta: { fw: i % 2 ? '4.1' : 4.1, 'ü-key': [i, null, { deep: [] }] },
  };
  if (i % 50 === 7) rec.diag = [{ code: 101, msg: 'fix degraded' }];
  return rec;
}

describe('client.records() against an embedded S4', { timeout: 120_000 }, () => {
  let server: Embedded;
  let client: S4Client;
  const written = new Map<string, { ts: number; fields: Record<string, FieldValue> }[]>();
  beforeAll(async () => {
    server = await startEmbedded();
    client = new S4Client({ url: server.url });
    const samples: Sample[] = [];
    for (let m = 0; m < 3; m++) {
      const list: { ts: number; fields: Record<string, FieldValue> }[] = [];
      for (let i = 0; i < 1500; i++) {
        const fields = record(m, i);
        samples.push({ metric: 'sdk.rec', tags: { machine: `m${m}` }, ts: base + i * 1000, fields });
        list.push({ ts: base + i * 1000, fields });
      }
      written.set(`m${m}`, list);
    }
    await client.write(samples);
    // Half of it into segments, so both the columnar answer and the merging one are read.
    await client.flush();
    await client.write(Array.from({ length: 100 }, (_, i) => ({ metric: 'sdk.rec', tags: { machine: 'm9' }, ts: base + HOUR + i * 1000, fields: record(9, i) })));
  }, 120_000);
  afterAll(async () => {
    await server?.close();
    if (server !== undefined) removeDir(server.dataDir);
  }, 60_000);

  it('builds every record as written (key order included), chunk by chunk', async () => {
    const got = new Map<string, { ts: number; fields: Record<string, FieldValue> }[]>();
    for await (const chunk of client.records({ metric: 'sdk.rec' }, { from: base, to: base + HOUR })) {
      expect(chunk.length).toBe(chunk.ts.length);
      const list = got.get(chunk.tags.machine!) ?? [];
      for (const r of chunk.records()) {
        expect(r.metric).toBe('sdk.rec');
        list.push({ ts: r.ts, fields: r.fields });
      }
      got.set(chunk.tags.machine!, list);
    }
    expect([...got.keys()].sort()).toEqual(['m0', 'm1', 'm2']);
    // The server keeps a sample's top-level fields in name order; everything inside a field keeps its own order.
    const byName = (list: { ts: number; fields: Record<string, FieldValue> }[] | undefined) => JSON.stringify(list?.map((r) => ({ ts: r.ts, fields: Object.fromEntries(Object.entries(r.fields).sort(([a], [b]) => (a < b ? -1 : 1))) })));
    for (const [m, list] of written) expect(byName(got.get(m))).toBe(byName(list));
  });

  it('reads one path as a column: a Float64Array for numbers in every sample, values through arrays', async () => {
    const want = written.get('m1')!;
    let at = 0;
    for await (const chunk of client.records({ metric: 'sdk.rec', tags: { machine: 'm1' } }, { from: base, to: base + HOUR })) {
      const vib = chunk.column('imu.vibration');
      expect(vib).toBeInstanceOf(Float64Array);
      expect(Array.from(vib as Float64Array)).toEqual(want.slice(at, at + chunk.length).map((r) => (r.fields.imu as { vibration: number }).vibration));
      expect(chunk.column('sats.prn')).toEqual(want.slice(at, at + chunk.length).map((r) => (r.fields.sats as { prn: number }[]).map((s) => s.prn)));
      expect(chunk.column('diag.code').filter((v) => v !== undefined)).toEqual(want.slice(at, at + chunk.length).filter((r) => r.fields.diag).map(() => [101]));
      at += chunk.length;
    }
    expect(at).toBe(want.length);
  });

  it('projects paths on the server, and reads hot (unflushed) records the same way', async () => {
    const rows: unknown[] = [];
    for await (const chunk of client.records({ metric: 'sdk.rec', tags: { machine: 'm0' }, fields: ['imu.vibration', 'sats.prn'] }, { from: base, to: base + 3 }))
      for (const r of chunk.records()) rows.push(r.fields);
    const first = written.get('m0')![0]!.fields as { imu: { vibration: number }; sats: { prn: number }[] };
    expect(rows).toEqual([{ imu: { vibration: first.imu.vibration }, sats: first.sats.map((s) => ({ prn: s.prn })) }]);
    const hot: unknown[] = [];
    for await (const chunk of client.records({ metric: 'sdk.rec', tags: { machine: 'm9' } }, { from: base + HOUR, to: base + 2 * HOUR })) for (const r of chunk.records()) hot.push(r.fields);
    const sorted = (r: unknown) => Object.fromEntries(Object.entries(r as object).sort(([a], [b]) => (a < b ? -1 : 1)));
    expect(JSON.stringify(hot.map(sorted))).toBe(JSON.stringify(Array.from({ length: 100 }, (_, i) => sorted(record(9, i)))));
  });

});

describe('client.records() back-pressure', () => {
  it('pulls the next chunk from the body only when the loop asks for it, and cancels the body when the loop breaks', async () => {
    let pulls = 0;
    let cancelled = false;
    const chunk = (i: number) => packr.pack({ metric: 'm', tags: { i: String(i) }, ts: Float64Array.of(i), fields: { v: Float64Array.of(i) } });
    const client = new S4Client({
      url: 'http://s4.invalid',
      fetch: async () =>
        new Response(
          new ReadableStream<Uint8Array>(
            {
              pull: (ctl) => {
                if (pulls === 1000) ctl.close();
                else ctl.enqueue(chunk(pulls++));
              },
              cancel: () => {
                cancelled = true;
              },
            },
            { highWaterMark: 0 },
          ),
          { status: 200, headers: { 'content-type': 'application/msgpack' } },
        ),
    });
    const seen: number[] = [];
    for await (const batch of client.records({ metric: 'm' }, { from: 0, to: 10 })) {
      seen.push(batch.ts[0]!);
      expect(pulls).toBeLessThanOrEqual(seen.length + 1);
      if (seen.length === 3) break;
    }
    expect(seen).toEqual([0, 1, 2]);
    expect(pulls).toBeLessThanOrEqual(4);
    expect(cancelled).toBe(true);
  });
});
