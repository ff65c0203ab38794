import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { projectColumns } from '@s4/format';
import { gpsRecords } from '../../libs/format/src/testing/gps.js';
import { expectOk, post, queryAll, type SeriesAnswer } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore } from '../support/model.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 0, 7, 0);
const DEVICES = ['dm-1', 'dm-2'];
const N = 2400; // per device: two hours, one record every 3 s
const PROJECTIONS = [['imu.vibration', 'sats.prn'], ['position.lat', 'meta.fw', 'diag.code'], ['imu.vibration.rms']];

/** Nested GPS records whose shape changes: a key that comes and goes, a type change, key order, null vs missing. */
function device(d: number): { ts: number[]; records: Record<string, FieldValue>[] } {
  const { records } = gpsRecords(N, d + 1);
  const out = records.map((r, i) => {
    const rec = r as Record<string, FieldValue>;
    if (i % 50 === 7) rec['imu'] = 'offline';
    if (i % 61 === 3) rec['position'] = { lon: 151.2, lat: -33.8 };
    if (i % 97 === 11) (rec['meta'] as Record<string, FieldValue>)['fw'] = null;
    if (i % 89 === 13) rec['sats'] = [];
    return rec;
  });
  return { ts: out.map((_, i) => H0 + i * 3000), records: out };
}

const data = DEVICES.map((_, d) => device(d));
/** The same records under two metrics: written as NDJSON rows, and as MessagePack columns the way the SDK sends them. */
const METRICS = ['machine.gps', 'machine.gps.sdk'];
const key = (d: number, metric: string) => ExpectedStore.key(metric, { device: DEVICES[d]! });

/** Per series, the columns the store must answer (all fields, or projected by path). */
function expected(metric: string, paths?: string[]): Map<string, { ts: number[]; fields: Record<string, FieldValue[]> }> {
  const out = new Map<string, { ts: number[]; fields: Record<string, FieldValue[]> }>();
  data.forEach(({ ts, records }, d) => {
    const fields: Record<string, FieldValue[]> = {};
    records.forEach((r, i) => {
      for (const [k, v] of Object.entries(r)) (fields[k] ??= new Array<FieldValue>(ts.length).fill(null))[i] = v;
    });
    out.set(key(d, metric), paths ? projectColumns({ ts, fields }, paths) : { ts, fields });
  });
  return out;
}

/** Each sample as JSON, top-level fields by name, nested key order as stored: exact comparison. */
function asRecords(answer: SeriesAnswer | ReturnType<typeof expected>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, c] of answer) {
    const names = Object.keys(c.fields).sort();
    out.set(
      k,
      c.ts.map((t, i) => JSON.stringify([t, names.flatMap((f) => (c.fields[f]![i] === null ? [] : [[f, c.fields[f]![i]]]))])),
    );
  }
  return out;
}

describe.each(MODES)('nested records end to end over HTTP: %s', (mode) => {
  let s4: S4Process;

  beforeAll(async () => {
    s4 = await S4Process.start(await modeEnv(mode));
  });
  afterAll(async () => {
    await s4?.stop();
  });

  async function checkAll(): Promise<void> {
    for (const metric of METRICS) {
      const range = { metric, from: String(H0 - H), to: String(H0 + 3 * H) };
      for (const format of ['json', 'ndjson'] as const) expect(asRecords(await queryAll(s4.url, range, format)), metric).toEqual(asRecords(expected(metric)));
      for (const paths of PROJECTIONS) {
        const got = await queryAll(s4.url, { ...range, fields: paths.join(',') }, 'json');
        expect(asRecords(got), `${metric} ${paths.join(',')}`).toEqual(asRecords(expected(metric, paths)));
      }
    }
  }

  it("writes nested records as JSON rows and as MessagePack columns (the SDK's wire), and reads them back exactly and projected by path from the hot tier", async () => {
    const rows = data.flatMap(({ ts, records }, d) => records.map((fields, i) => JSON.stringify({ metric: METRICS[0], tags: { device: DEVICES[d] }, ts: ts[i], fields })));
    for (let b = 0; b < rows.length; b += 1000) await expectOk(await post(`${s4.url}/v1/write`, rows.slice(b, b + 1000).join('\n'), 'application/x-ndjson'));
    // As the SDK's client.ts toColumns sends a batch: a column per field, null where a record lacks it.
    for (let b = 0; b < N; b += 500) {
      const series = data.map(({ ts, records }, d) => {
        const chunk = records.slice(b, b + 500);
        const fields: Record<string, FieldValue[]> = {};
        chunk.forEach((r, i) => {
          for (const [k, v] of Object.entries(r)) (fields[k] ??= new Array<FieldValue>(chunk.length).fill(null))[i] = v;
        });
        return { metric: METRICS[1], tags: { device: DEVICES[d] }, ts: ts.slice(b, b + 500), fields };
      });
      await expectOk(await post(`${s4.url}/v1/write`, { series }, 'application/msgpack'));
    }
    await checkAll();
  });

  it('after a flush, reads them back exactly and projected by path from segments', async () => {
    const stats = (await (await expectOk(await post(`${s4.url}/v1/admin/flush`, {}))).json()) as { samples: number };
    expect(stats.samples).toBe(METRICS.length * DEVICES.length * N);
    await checkAll();
  });
});
