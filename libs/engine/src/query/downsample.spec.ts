import { describe, expect, it } from 'vitest';
import { reduceToPixels } from './downsample.js';

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
