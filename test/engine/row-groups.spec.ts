import { afterEach, describe, expect, it } from 'vitest';
import { isDaySegmentKey, type FieldValue } from '@s4/core';
import { decodeSegment } from '@s4/format';
import { H, Harness, MIN, answers, dayOf, type Sample } from '../support/compact-harness.js';
import { rng } from '../support/model.js';

/**
 * Hour blocks of 1 Hz records are written as row groups (segment.md, "Row groups"): reads of part
 * of an hour, merges with late parts and hot data, hour and day folds must answer exactly as
 * before, and a read of ten minutes fetches only its groups.
 */
const H0 = Date.UTC(2026, 9, 5, 6);
const SERIES = [
  { metric: 'rec', tags: { host: 'h0' } },
  { metric: 'rec', tags: { host: 'h1' } },
];

function base(): Sample[] {
  const r = rng(1);
  const out: Sample[] = [];
  for (const [k, s] of SERIES.entries())
    for (let i = 0; i < 7200; i++) {
      // Noisy numbers, so that blocks are not all compressed away and byte counts mean something.
      const rec: Record<string, FieldValue> = { a: r() * 1000, s: ['x', 'y', 'zz'][i % 3]!, arr: i % 5 === 0 ? [] : [i, { b: i % 2 === 0 }] };
      // Shapes change inside the hour: a key appears in the second half of each group's span.
      if (i % 600 >= 300) rec['late'] = -i;
      out.push({ ...s, ts: H0 + i * 1000 + k * 7, fields: { v: Math.round(r() * 1e6) / 100, rec } });
    }
  return out;
}

function late(seed: number, n: number): Sample[] {
  const r = rng(seed);
  return Array.from({ length: n }, () => {
    const k = Math.floor(r() * SERIES.length);
    // On timestamps the base has (overwrites) and between them (new samples).
    const ts = H0 + Math.floor(r() * 7200) * 1000 + k * 7 + (r() < 0.5 ? 0 : 500);
    const fields: Record<string, FieldValue> = r() < 0.5 ? { v: -1, note: 'late' } : { rec: { other: [1, 2] } };
    return { ...SERIES[k]!, ts, fields };
  });
}

/** The raw answers of many ranges: inside a group, across group and window edges, the whole span. */
async function ranges(h: Harness, q = h.query()): Promise<unknown> {
  const out: Record<string, unknown> = {};
  const spans = [
    [H0 + 20 * MIN, H0 + 30 * MIN],
    [H0 + 25 * MIN, H0 + 41 * MIN + 1],
    [H0 + 55 * MIN - 1, H0 + 65 * MIN],
    [H0 + 10 * MIN + 7, H0 + 10 * MIN + 8],
    [H0 - H, H0 + 3 * H],
  ];
  for (const [from, to] of spans) {
    const got = [];
    for await (const s of q.query({ metric: 'rec', tags: {}, from: from!, to: to! })) got.push(s);
    out[`${from}-${to}`] = got;
    const projected = [];
    for await (const s of q.query({ metric: 'rec', tags: {}, from: from!, to: to!, fields: ['rec.arr.b', 'v'] })) projected.push(s);
    out[`${from}-${to} projected`] = projected;
  }
  return out;
}

const open: Harness[] = [];
afterEach(async () => {
  for (const h of open.splice(0)) await h.close();
});

describe('row groups through the engine', () => {
  it('answer every range exactly across late parts, hot data, an hour fold and a day fold; ten minutes fetch a fraction of the hour', async () => {
    const h = await Harness.open('embedded', { shards: 1, start: H0 + 3 * H });
    open.push(h);
    const samples = base();
    await h.writeAndFlush(samples);
    const [ref] = h.refs();
    const days = [dayOf(H0)];
    const entries = await h.entries(ref!, days);
    const groupsOf = async (key: string) => {
      const got = await h.objects.get(key);
      if (!got || got.notModified) throw new Error(`${key} missing`);
      return decodeSegment(got.body).footer.series.map((e) => e.directory?.layout.groups);
    };
    for (const e of entries) for (const g of await groupsOf(e.key)) expect(g?.slots).toEqual([0, 1, 2, 3, 4, 5]);

    // The exact records of ten minutes, and a fraction of the bytes of the whole hour.
    const ten = h.query();
    const got = [];
    for await (const s of ten.query({ metric: 'rec', tags: { host: 'h0' }, from: H0 + 20 * MIN, to: H0 + 30 * MIN })) got.push(s);
    const want = samples.filter((s) => s.tags['host'] === 'h0' && s.ts >= H0 + 20 * MIN && s.ts < H0 + 30 * MIN);
    expect(got[0]!.ts).toEqual(want.map((s) => s.ts));
    expect(JSON.stringify(got[0]!.fields['rec'])).toBe(JSON.stringify(want.map((s) => s.fields['rec'])));
    const hour = h.query();
    for await (const s of hour.query({ metric: 'rec', tags: { host: 'h0' }, from: H0, to: H0 + H })) expect(s.ts).toHaveLength(3600);
    expect(ten.counters.objectBytes).toBeLessThan(hour.counters.objectBytes / 4);

    await h.writeAndFlush(late(3, 300));
    await h.writeAndFlush(late(4, 200));
    // Some late data stays hot: it must keep winning over the parts and the folds.
    await h.write(late(5, 50).map((s) => ({ ...s, fields: { v: 42, hot: 'yes' } })));
    const before = await ranges(h);
    expect(await ranges(h, h.warm)).toEqual(before);
    const aggs = await answers(h.query(), ['rec'], H0 - H, H0 + 3 * H, [{}], true);

    const compactor = h.compactor();
    h.clock.set(H0 + 2 * H + 10 * MIN);
    expect((await compactor.compactAll()).windows).toBe(2);
    for (const e of await h.entries(ref!, days)) for (const g of await groupsOf(e.key)) expect(g?.slots.length).toBeGreaterThanOrEqual(6);
    expect(await ranges(h)).toEqual(before);
    expect(await ranges(h, h.warm)).toEqual(before);

    h.clock.set(dayOf(H0) + 86_400_000 + 2 * H);
    expect((await compactor.compactAll()).days).toBe(1);
    const day = await h.entries(ref!, days);
    expect(isDaySegmentKey(day[0]!.key)).toBe(true);
    // Two hours of 1 Hz samples (plus late ones) in a day object: twelve 10-minute groups.
    for (const g of await groupsOf(day[0]!.key)) expect(g?.slots).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(await ranges(h)).toEqual(before);
    expect(await answers(h.query(), ['rec'], H0 - H, H0 + 3 * H, [{}], true)).toEqual(aggs);
  });
});
