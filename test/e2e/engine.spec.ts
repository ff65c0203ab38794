import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FieldValue } from '@s4/core';
import { expectOk, normalise, post, queryAll } from '../support/client.js';
import { MODES, modeEnv } from '../support/modes.js';
import { ExpectedStore, rng } from '../support/model.js';
import { ALL_AGGS, bruteAggregate, closeEnough } from '../support/brute.js';
import { S4Process } from '../support/s4-process.js';

const H = 3_600_000;
const H0 = Date.UTC(2026, 0, 5, 0);
const SERIES = Array.from({ length: 10 }, (_, i) => ({ metric: 'sensor.temp', tags: { sensor: `s${i}`, site: i % 2 ? 'b' : 'a' } }));
const FORMATS = ['json', 'msgpack', 'csv', 'ndjson'] as const;

type Write = { metric: string; tags: Record<string, string>; ts: number; fields: Record<string, FieldValue> };

/** 10 series × 3 hours at 1 Hz, out of order and with 2,000 duplicates; the same every call. */
function baseWrites(): Write[] {
  const random = rng(42);
  const writes: Write[] = [];
  for (const s of SERIES)
    for (let i = 0; i < 3 * 3600; i++) writes.push({ ...s, ts: H0 + i * 1000, fields: { value: Math.round(random() * 10_000) / 100 } });
  for (let i = 0; i < 2000; i++) {
    const w = writes[Math.floor(random() * writes.length)]!;
    writes.push({ ...w, fields: { value: -w.ts / 1e9, label: 'dup' } });
  }
  // Shuffle within blocks of 5,000: out of order, but a duplicate still comes after its original.
  for (let b = 0; b < writes.length; b += 5000) {
    const end = Math.min(writes.length, b + 5000);
    for (let i = end - 1; i > b; i--) {
      const j = b + Math.floor(random() * (i - b + 1));
      [writes[i], writes[j]] = [writes[j]!, writes[i]!];
    }
  }
  return writes;
}

/** Late data for hour 1 (already flushed, when written after a flush): overwrites and new timestamps. */
function lateWrites(): Write[] {
  const random = rng(43);
  const late: Write[] = [];
  for (const s of SERIES)
    for (let i = 0; i < 200; i++) {
      const ts = H0 + H + Math.floor(random() * 3600) * 1000 + (i % 2 ? 500 : 0);
      late.push({ ...s, ts, fields: { value: i, label: `late-${i}` } });
    }
  return late;
}

/** Writes in blocks of 5,000, rotating through every body form; each acknowledged block goes into the model. */
async function writeInEveryForm(url: string, writes: Write[], model: ExpectedStore): Promise<void> {
  let n = 0;
  for (let b = 0; b < writes.length; b += 5000, n++) {
    const batch = writes.slice(b, b + 5000);
    const form = n % 4;
    if (form === 0) await expectOk(await post(`${url}/v1/write`, { samples: batch }));
    else if (form === 1) await expectOk(await post(`${url}/v1/write`, batch.map((w) => JSON.stringify(w)).join('\n'), 'application/x-ndjson'));
    else if (form === 2) await expectOk(await post(`${url}/v1/write`, { samples: batch }, 'application/msgpack'));
    else {
      // columnar: one entry per series run; the order inside each column is the write order
      const series = batch.map((w) => ({ metric: w.metric, tags: w.tags, ts: [w.ts], fields: { value: [w.fields.value!], label: [w.fields.label ?? null] } }));
      await expectOk(await post(`${url}/v1/write`, { series }));
    }
    for (const w of batch) model.write(w.metric, w.tags, w.ts, w.fields);
  }
}

async function writeLate(url: string, model: ExpectedStore): Promise<Set<string>> {
  const late = lateWrites();
  await expectOk(await post(`${url}/v1/write`, late.map((w) => JSON.stringify(w)).join('\n'), 'application/x-ndjson'));
  for (const w of late) model.write(w.metric, w.tags, w.ts, w.fields);
  return new Set(late.map((w) => `${w.tags.sensor}/${w.ts}`));
}

async function flush(url: string): Promise<{ objects: number; series: number; samples: number; bytes: number }> {
  return (await (await expectOk(await post(`${url}/v1/admin/flush`, {}))).json()) as { objects: number; series: number; samples: number; bytes: number };
}

async function checkEverySeries(url: string, model: ExpectedStore): Promise<void> {
  const expected = model.expected();
  for (const format of FORMATS) {
    const all = await queryAll(url, { metric: 'sensor.temp', from: String(H0 - H), to: String(H0 + 4 * H) }, format);
    expect(normalise(all)).toEqual(normalise(expected));
  }
  for (const s of SERIES) {
    const one = await queryAll(url, { metric: s.metric, tag: [`sensor:${s.tags.sensor}`], from: String(H0), to: String(H0 + 3 * H) }, 'json');
    const k = ExpectedStore.key(s.metric, s.tags);
    expect(normalise(one)).toEqual(normalise(new Map([[k, expected.get(k)!]])));
  }
}

describe.each(MODES)('S4 end to end over HTTP: %s', (mode) => {
  /** A server of its own (own data directory, namespace, bucket), for a test that follows the data through flushes. */
  async function withOwnServer(run: (url: string, model: ExpectedStore) => Promise<void>): Promise<void> {
    const own = await S4Process.start(await modeEnv(mode));
    try {
      await run(own.url, new ExpectedStore());
    } finally {
      await own.stop();
    }
  }

  it('writes 10 series × 3 hours at 1 Hz, out of order and with duplicates, in every body form', async () => {
    await withOwnServer(async (url, model) => {
      await writeInEveryForm(url, baseWrites(), model);
      expect(model.size).toBe(10 * 3 * 3600);
      await checkEverySeries(url, model);
    });
  });

  it('flushes every closed window and still answers exactly the de-duplicated input', async () => {
    await withOwnServer(async (url, model) => {
      await writeInEveryForm(url, baseWrites(), model);
      const stats = await flush(url);
      expect(stats.samples).toBe(10 * 3 * 3600);
      expect(stats.series).toBe(30);
      expect(stats.objects).toBeGreaterThanOrEqual(3);
      expect(stats.bytes).toBeGreaterThan(0);
      await checkEverySeries(url, model);
    });
  });

  it('merges late data into a flushed hour, before and after the next flush', async () => {
    await withOwnServer(async (url, model) => {
      await writeInEveryForm(url, baseWrites(), model);
      await flush(url);
      const unique = await writeLate(url, model);
      await checkEverySeries(url, model); // late data in the hot tier, older data in segments
      const stats = await flush(url);
      expect(stats.samples).toBe(unique.size);
      await checkEverySeries(url, model); // two parts for hour 1
    });
  });

  // The tests below only read (a rollup pass and a restart leave every answer as it was), so they
  // share one server, which beforeAll fills explicitly: the base data flushed, then late data for
  // an already flushed hour left in the hot tier, so answers merge segments and the hot tier.
  describe('on one shared server with flushed and hot data', () => {
    let s4: S4Process;
    const model = new ExpectedStore();

    beforeAll(async () => {
      s4 = await S4Process.start(await modeEnv(mode));
      await writeInEveryForm(s4.url, baseWrites(), model);
      await flush(s4.url);
      await writeLate(s4.url, model);
    });
    afterAll(async () => {
      await s4?.stop();
    });

    it('answers step aggregates, grouped and per series, from rollups and raw data alike', async () => {
      const rolled = (await (await expectOk(await post(`${s4.url}/v1/admin/rollup`, {}))).json()) as { objects: number };
      expect(rolled.objects).toBeGreaterThan(0);
      const expected = model.expected();
      // Half-hour-offset ranges make the edge windows come from raw data, the middle from rollups.
      for (const [step, from, to, groupBy] of [
        ['1h', H0, H0 + 3 * H, undefined],
        ['1m', H0 + H / 2, H0 + 2 * H + H / 2, undefined],
        ['15m', H0, H0 + 3 * H, 'site'],
        ['1d', H0 - H, H0 + 4 * H, ''],
      ] as const) {
        const q = new URLSearchParams({ metric: 'sensor.temp', from: String(from), to: String(to), step, agg: ALL_AGGS.join(',') });
        if (groupBy !== undefined) q.set('groupBy', groupBy);
        const body = (await (await expectOk(await fetch(`${s4.url}/v1/query?${q}`))).json()) as { series: { tags: Record<string, string>; ts: number[]; fields: Record<string, number[]> }[] };
        const stepMs = { '1h': H, '1m': 60_000, '15m': 15 * 60_000, '1d': 86_400_000 }[step];
        const groups = new Map<string, { ts: number[]; values: FieldValue[] }[]>();
        for (const s of SERIES) {
          const g = groupBy === undefined ? JSON.stringify(s.tags) : groupBy === '' ? '{}' : JSON.stringify({ [groupBy]: s.tags[groupBy as 'site'] });
          const c = expected.get(ExpectedStore.key(s.metric, s.tags))!;
          groups.set(g, [...(groups.get(g) ?? []), { ts: c.ts, values: c.fields.value! }]);
        }
        expect(body.series).toHaveLength(groups.size);
        for (const s of body.series) {
          const key = JSON.stringify(Object.fromEntries(Object.entries(s.tags).sort(([a], [b]) => (a < b ? -1 : 1))));
          const want = bruteAggregate(groups.get(key)!, from, to, stepMs, ALL_AGGS);
          expect(s.ts).toEqual(want.ts);
          for (const agg of ALL_AGGS) s.fields[`${agg}(value)`]!.forEach((v, i) => expect(closeEnough(v, want.cols[agg]![i]!), `${step} ${agg}`).toBe(true));
        }
      }
    });

    it('answers the latest sample of every series, hot or flushed', async () => {
      const expected = model.expected();
      const body = (await (await expectOk(await fetch(`${s4.url}/v1/latest?metric=sensor.temp&from=0&to=${H0 + 4 * H}`))).json()) as {
        series: { metric: string; tags: Record<string, string>; ts: number[]; fields: Record<string, FieldValue[]> }[];
      };
      expect(body.series).toHaveLength(SERIES.length);
      for (const s of body.series) {
        const c = expected.get(ExpectedStore.key(s.metric, s.tags))!;
        const n = c.ts.length - 1;
        expect(s.ts).toEqual([c.ts[n]]);
        expect(s.fields.value).toEqual([c.fields.value![n]]);
      }
    });

    it('keeps everything across a restart', async () => {
      await s4.stop();
      await s4.start();
      await checkEverySeries(s4.url, model);
    });

    it('selects by tag equality and by fields', async () => {
      const siteB = await queryAll(s4.url, { metric: 'sensor.temp', tag: ['site:b'], from: String(H0), to: String(H0 + 3 * H), fields: 'label' }, 'json');
      expect(siteB.size).toBe(5);
      for (const s of siteB.values()) expect(Object.keys(s.fields)).toEqual(['label']);
      const none = await queryAll(s4.url, { metric: 'sensor.temp', tag: ['site:c'], from: String(H0), to: String(H0 + 3 * H) }, 'json');
      expect(none.size).toBe(0);
      const series = (await (await fetch(`${s4.url}/v1/series?metric=sensor.temp&tag=site:a`)).json()) as { series: unknown[] };
      expect(series.series).toHaveLength(5);
    });
  });
});
