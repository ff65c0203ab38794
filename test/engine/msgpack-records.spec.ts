import { describe, expect, it } from 'vitest';
import { Packr } from 'msgpackr';
import { RecordEncoder, msgpack } from '@s4/format';
import { Writer, parseWrite, runSteps, scanMsgpackSteps, type SeriesWrite } from '@s4/engine';
import { gpsRecords } from '../../libs/format/src/testing/gps.js';

const LIMITS = { maxSamplesPerRequest: 1e6, maxFieldsPerSample: 100, maxTags: 10, maxTagLength: 100, maxFutureMs: 1e9, maxNestingDepth: 64 };
// As the SDK packs a write (apps/sdk codec.ts).
const sdk = new Packr({ useRecords: false, moreTypes: true, variableMapSize: true });

/** Each series' records as the write path encodes them. */
function records(out: SeriesWrite[]): string[] {
  const enc = new RecordEncoder(1 << 20);
  return out.map((s) => {
    for (let i = 0; i < s.ts.length; i++) enc.recordOf(s.ts[i]!, s.fields, i, s.key.metric);
    return Buffer.from(enc.take()).toString('hex');
  });
}

describe('the SDK’s write of nested records, scanned from its bytes', () => {
  it('is taken by the scan (changing shapes, nulls for absent fields) and written byte for byte as msgpackr + the validator write it', () => {
    const { records: recs } = gpsRecords(300, 3);
    const fields: Record<string, unknown[]> = {};
    recs.forEach((r, i) => {
      for (const [k, v] of Object.entries(r as Record<string, unknown>)) (fields[k] ??= new Array<unknown>(recs.length).fill(null))[i] = v;
    });
    fields['imu']![7] = 'offline';
    fields['position']![9] = { lon: 151.2, lat: -33.8 };
    const body = sdk.pack({ series: [{ metric: 'machine.gps', tags: { device: 'dm-1' }, ts: recs.map((_, i) => 1 + i * 3), fields }] });
    const scanned = runSteps(scanMsgpackSteps(body));
    expect(scanned).not.toBeNull();
    const viaScan = parseWrite({ kind: 'scanned', scanned: scanned! }, LIMITS, 1e9);
    const viaMsgpackr = parseWrite({ kind: 'json', body: msgpack.unpack(body) as unknown }, LIMITS, 1e9);
    expect(records(viaScan)).toEqual(records(viaMsgpackr));
    // And as the Writer hands them to the hot tier.
    const writer = new Writer(null as never, { ns: 'default', shards: 16, maxRecordBytes: 1 << 20 });
    const hex = (s: SeriesWrite[]) => writer.encode(s).appends.map((a) => Buffer.from(a.data).toString('hex'));
    expect(hex(parseWrite({ kind: 'scanned', scanned: runSteps(scanMsgpackSteps(body))! }, LIMITS, 1e9))).toEqual(hex(viaMsgpackr));
  });
});
