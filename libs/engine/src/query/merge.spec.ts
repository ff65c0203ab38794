import { describe, expect, it } from 'vitest';
import { clip, concatWindows, mergeSources } from './merge.js';
import { reduceToPixels } from './downsample.js';

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

describe('reduceToPixels', () => {
  it('keeps first, last, min and max of each pixel column, at most maxPoints', () => {
    const ts = Array.from({ length: 1000 }, (_, i) => i);
    const v = ts.map((i) => (i === 123 ? 1000 : i === 321 ? -1000 : Math.sin(i)));
    const out = reduceToPixels({ ts, fields: { value: v } }, 0, 1000, 40);
    expect(out.ts.length).toBeLessThanOrEqual(40);
    expect(out.ts).toEqual([...out.ts].sort((a, b) => a - b));
    expect(out.ts).toContain(0);
    expect(out.ts).toContain(999);
    expect(out.fields.value).toContain(1000);
    expect(out.fields.value).toContain(-1000);
  });
});
