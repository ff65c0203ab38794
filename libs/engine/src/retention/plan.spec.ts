import fc from 'fast-check';
import { DAY_MS, WINDOW_MS, currentDayRollupKey, rollupKey, segmentKey, type NamespacePolicy } from '@s4/core';
import type { CatalogEntry } from '@s4/format';
import { describe, expect, it } from 'vitest';
import { isExpired, planDay, retentionOf } from './plan.js';

const ref = { ns: 'n', shard: 0 };
const T0 = Date.UTC(2026, 0, 1);

const retention = fc.option(fc.integer({ min: 1, max: 20 * 24 }).map((h) => h * WINDOW_MS), { nil: null });
const policy = fc.record({
  raw: retention,
  rollups: fc.subarray(['1m', '1h'] as const).chain((rs) => fc.tuple(...rs.map((r) => retention.map((ms) => ({ resolution: r, retentionMs: ms }))))),
}).map(
  ({ raw, rollups }): NamespacePolicy => ({
    name: 'n',
    prefixes: [],
    shards: 1,
    rawRetentionMs: raw,
    rollups,
    backfillMs: 0,
    hotMs: 0,
    limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: 1, maxRecordBytes: 1, maxSamplesPerSecond: undefined },
  }),
);

const entry = (key: string, window: number): CatalogEntry => ({ window, part: 1, fence: 1, key, size: 10, footerOffset: 0, footerLength: 1, series: 1, samples: 1, minTs: window, maxTs: window, metrics: null, createdAt: window });

/** One day's catalog of each kind: some hours of segments, their hourly rollups, maybe the day object. */
const day = fc.record({ day: fc.integer({ min: 0, max: 60 }), hours: fc.uniqueArray(fc.integer({ min: 0, max: 23 }), { minLength: 1, maxLength: 24 }), dayObject: fc.boolean() }).map(({ day: d, hours, dayObject }) => {
  const start = T0 + d * DAY_MS;
  const segments = hours.map((h) => entry(segmentKey(ref, start + h * WINDOW_MS, 1, 1), start + h * WINDOW_MS));
  const rollups = hours.map((h) => entry(rollupKey(ref, start + h * WINDOW_MS, `${h}`.padStart(16, '0')), start + h * WINDOW_MS));
  if (dayObject) rollups.push(entry(currentDayRollupKey(ref, start, rollups.map((r) => r.key)), start));
  return { start, segments, rollups };
});
// Whole hours too, so that an entry exactly at its retention's end is among the cases.
const clock = fc.tuple(fc.integer({ min: 0, max: 80 * 24 }), fc.constantFrom(0, -1, 1234)).map(([h, off]) => T0 + h * WINDOW_MS + off);

/** The oracle, written from the policy's words rather than from plan.ts: what one entry holds and how long it may live. */
function oracle(e: CatalogEntry, p: NamespacePolicy, now: number): boolean {
  const isDay = /\/d-[0-9a-f]{16}\.s4rol$/.test(e.key);
  const isRollup = e.key.endsWith('.s4rol');
  const end = e.window + (isDay ? 24 : 1) * WINDOW_MS;
  const res = (r: string) => p.rollups.find((x) => x.resolution === r);
  let keep: number | null;
  if (!isRollup) keep = p.rawRetentionMs;
  else if (p.rollups.length === 0) keep = p.rawRetentionMs;
  else if (isDay) keep = (res('1h') ?? res('1m'))!.retentionMs;
  else keep = (res('1m') ?? res('1h'))!.retentionMs;
  return keep !== null && now - end >= keep;
}

describe('retention plan', () => {
  it('takes out exactly the entries whose whole span is past their retention, and a catalog only once all of it is', () => {
    fc.assert(
      fc.property(policy, fc.array(day, { minLength: 1, maxLength: 4 }), clock, (p, days, now) => {
        for (const d of days)
          for (const [kind, entries] of [['segment', d.segments], ['rollup', d.rollups]] as const) {
            const { expired, dropCatalog } = planDay(entries, kind, d.start, p, now);
            const want = entries.filter((e) => oracle(e, p, now));
            expect(expired.map((e) => e.key).sort()).toEqual(want.map((e) => e.key).sort());
            // Nothing kept has all its data past its retention; nothing taken has any data within it.
            for (const e of entries) expect(expired.includes(e)).toBe(oracle(e, p, now));
            if (dropCatalog) {
              expect(expired.length).toBe(entries.length);
              // The whole day is past every retention of the catalog's kinds.
              for (const k of kind === 'segment' ? (['segment'] as const) : (['hour-rollup', 'day-rollup'] as const)) {
                const keep = retentionOf(p, k);
                expect(keep).not.toBeNull();
                expect(d.start + DAY_MS).toBeLessThanOrEqual(now - keep!);
              }
            }
          }
      }),
      { numRuns: 1000 },
    );
  });

  it('expires an entry exactly when its span ends its retention before now', () => {
    const p: NamespacePolicy = { name: 'n', prefixes: [], shards: 1, rawRetentionMs: 2 * DAY_MS, rollups: [{ resolution: '1m', retentionMs: 3 * DAY_MS }, { resolution: '1h', retentionMs: 10 * DAY_MS }], backfillMs: 0, hotMs: 0, limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: 1, maxRecordBytes: 1, maxSamplesPerSecond: undefined } };
    const seg = entry(segmentKey(ref, T0, 1, 1), T0);
    const hour = entry(rollupKey(ref, T0, '0'.repeat(16)), T0);
    const dayObject = entry(currentDayRollupKey(ref, T0, [hour.key]), T0);
    const at = (e: CatalogEntry, kind: 'segment' | 'hour-rollup' | 'day-rollup', end: number, keep: number) => [isExpired(e, kind, p, end + keep - 1), isExpired(e, kind, p, end + keep)];
    expect(at(seg, 'segment', T0 + WINDOW_MS, 2 * DAY_MS)).toEqual([false, true]);
    expect(at(hour, 'hour-rollup', T0 + WINDOW_MS, 3 * DAY_MS)).toEqual([false, true]);
    expect(at(dayObject, 'day-rollup', T0 + DAY_MS, 10 * DAY_MS)).toEqual([false, true]);
  });

  it('keeps everything forever without a retention', () => {
    const p: NamespacePolicy = { name: 'n', prefixes: [], shards: 1, rawRetentionMs: null, rollups: [], backfillMs: 0, hotMs: 0, limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: 1, maxRecordBytes: 1, maxSamplesPerSecond: undefined } };
    const e = entry(segmentKey(ref, T0, 1, 1), T0);
    expect(isExpired(e, 'segment', p, T0 + 100 * 365 * DAY_MS)).toBe(false);
  });
});
