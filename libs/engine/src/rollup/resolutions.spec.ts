import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ROLLUP_RESOLUTIONS, rollupResolutionFor, rollupSeriesId } from './resolutions.js';

describe('rollup resolutions', () => {
  it('picks the coarsest stored resolution that divides the step', () => {
    fc.assert(
      fc.property(fc.oneof(fc.integer({ min: 1, max: 10 ** 10 }), fc.integer({ min: 1, max: 1000 }).map((k) => k * 60_000)), (step) => {
        const want = step % 3_600_000 === 0 ? '1h' : step % 60_000 === 0 ? '1m' : null;
        expect(rollupResolutionFor(step)).toBe(want);
      }),
    );
    expect(ROLLUP_RESOLUTIONS.map((r) => r.name)).toEqual(['1m', '1h']);
  });

  it('names rollup entries <series id>.<resolution>', () => {
    expect(rollupSeriesId('7f3a0c1d2e4b5a69', '1h')).toBe('7f3a0c1d2e4b5a69.1h');
  });
});
