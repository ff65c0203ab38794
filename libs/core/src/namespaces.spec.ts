import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { lifecycleDays, type NamespacePolicy } from './namespaces.js';
import { DAY_MS, WINDOW_MS } from './time.js';

const policy = (raw: number | null, rollups: [string, number | null][]): NamespacePolicy => ({
  name: 'n',
  prefixes: [],
  shards: 1,
  rawRetentionMs: raw,
  rollups: rollups.map(([resolution, retentionMs]) => ({ resolution, retentionMs })),
  backfillMs: 0,
  hotMs: 0,
  limits: { maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxFields: 1, maxRecordBytes: 1, maxSamplesPerSecond: undefined },
});

describe('S3 lifecycle days from a namespace policy', () => {
  it('never expire an object before the engine has expired it and waited out its delete grace', () => {
    const retention = fc.option(fc.integer({ min: 1, max: 3_000 * 24 }).map((h) => h * WINDOW_MS), { nil: null });
    fc.assert(
      fc.property(
        retention,
        retention,
        retention,
        fc.integer({ min: 0, max: 30 * DAY_MS }),
        // An object: the start of the data it holds, its span (an hour, or a whole day for day objects and catalogs), when S3 last saw it written.
        fc.integer({ min: 0, max: 400 * 24 }).map((h) => h * WINDOW_MS),
        fc.constantFrom(WINDOW_MS, DAY_MS),
        fc.integer({ min: 0, max: 60 * DAY_MS }),
        (raw, m1, h1, grace, start, span, writtenAfter) => {
          const p = policy(raw, [
            ['1m', m1],
            ['1h', h1],
          ]);
          const days = lifecycleDays(p, grace);
          const written = start + writtenAfter;
          const s3Deletes = (d: number | undefined) => (d === undefined ? Infinity : written + d * DAY_MS);
          const engineDeletes = (keep: number | null) => (keep === null ? Infinity : start + span + keep + grace);
          expect(s3Deletes(days.seg)).toBeGreaterThanOrEqual(engineDeletes(raw));
          expect(s3Deletes(days.cat)).toBeGreaterThanOrEqual(engineDeletes(raw));
          for (const keep of [m1, h1]) expect(s3Deletes(days.rollup)).toBeGreaterThanOrEqual(engineDeletes(keep));
          // Forever in the engine is forever in S3.
          if (raw === null) expect(days.seg).toBeUndefined();
        },
      ),
    );
  });

  it('rounds retention + a day + the grace up to whole days', () => {
    expect(lifecycleDays(policy(30 * DAY_MS, [['1h', 400 * DAY_MS]]), 600_000)).toEqual({ seg: 32, cat: 32, rollup: 402 });
    expect(lifecycleDays(policy(null, [['1m', 7 * DAY_MS]]), 0)).toEqual({ rollup: 8 });
    expect(lifecycleDays(policy(2 * DAY_MS, []), 0)).toEqual({ seg: 3, cat: 3, rollup: 3 });
  });
});
