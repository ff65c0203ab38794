import { describe, expect, it } from 'vitest';
import { clip, concatWindows, mergeSources } from './merge.js';

describe('mergeSources', () => {
  it('sorts, de-duplicates, and lets later sources and later rows win', () => {
    const merged = mergeSources([
      { data: { ts: [1, 2, 3], fields: { v: [1, 2, 3] } }, sortedUnique: true },
      { data: { ts: [3, 0, 2, 2], fields: { v: [30, 0, 20, 21], s: [null, 'x', null, null] } }, sortedUnique: false },
    ]);
    expect(merged).toEqual({ ts: [0, 1, 2, 3], fields: { v: [0, 1, 21, 30], s: ['x', null, null, null] } });
  });

  it('clips to [from, to) and projects fields', () => {
    const data = { ts: [1, 2, 3, 4], fields: { v: [1, 2, 3, 4], s: [null, null, null, 'x'] } };
    expect(clip(data, 2, 4)).toEqual({ ts: [2, 3], fields: { v: [2, 3] } });
    expect(clip(data, 0, 10, ['s', 'missing'])).toEqual({ ts: [1, 2, 3, 4], fields: { s: [null, null, null, 'x'], missing: [null, null, null, null] } });
  });

  it('concatenates windows, filling fields a window lacks', () => {
    expect(concatWindows([{ ts: [1], fields: { a: [1] } }, { ts: [5], fields: { b: [2] } }])).toEqual({ ts: [1, 5], fields: { a: [1, null], b: [null, 2] } });
  });
});
