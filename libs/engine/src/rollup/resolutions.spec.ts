import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { RAW_MARKER, parseRollupSeriesId, resolutionMs, rollupSeriesId } from '@s4/format';
import { BUCKET_VALUES, MIN_REDUCTION, pays, pickResolution, rollupsCanAnswer } from './resolutions.js';

describe('rollup resolutions', () => {
  it('picks the coarsest stored resolution that divides the step, never the raw marker', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.integer({ min: 1, max: 10 ** 10 }), fc.integer({ min: 1, max: 1000 }).map((k) => k * 60_000)),
        fc.subarray(['1m', '5m', '1h', RAW_MARKER, 'bogus']),
        (step, stored) => {
          const usable = stored.map((n) => [n, resolutionMs(n)] as const).filter((x): x is readonly [string, number] => x[1] !== null && step % x[1] === 0);
          const want = usable.sort((a, b) => b[1] - a[1])[0]?.[0] ?? null;
          expect(pickResolution(step, stored)).toBe(want);
        },
      ),
    );
    expect(resolutionMs(RAW_MARKER)).toBeNull();
    expect(resolutionMs('5m')).toBe(300_000);
    expect(rollupsCanAnswer(45_000)).toBe(false);
    expect(rollupsCanAnswer(120_000)).toBe(true);
  });

  it('stores a resolution only where its buckets average enough samples to cut the numbers read 4×', () => {
    // 1 Hz into 1-minute buckets: 60 samples per bucket of 5 numbers, 12×.
    expect(pays(3600, 60)).toBe(true);
    // 10 s into 1-minute buckets: 6 samples per bucket, 1.2×: not worth its bytes.
    expect(pays(360, 60)).toBe(false);
    // 10 s into 1-hour buckets: 360 per bucket.
    expect(pays(360, 1)).toBe(true);
    expect(pays(MIN_REDUCTION * BUCKET_VALUES, 1)).toBe(true);
    expect(pays(MIN_REDUCTION * BUCKET_VALUES - 1, 1)).toBe(false);
    expect(pays(0, 0)).toBe(false);
  });

  it('names rollup entries <series id>.<resolution> and parses them back', () => {
    expect(rollupSeriesId('7f3a0c1d2e4b5a69', '1h')).toBe('7f3a0c1d2e4b5a69.1h');
    fc.assert(
      fc.property(fc.stringMatching(/^[0-9a-f]{16}$/), fc.constantFrom('1m', '1h', RAW_MARKER), (id, res) => {
        expect(parseRollupSeriesId(rollupSeriesId(id, res))).toEqual({ id, resolution: res });
      }),
    );
  });
});
