import { describe, expect, it } from 'vitest';
import { grown } from './rows.js';

describe('grown', () => {
  it('keeps the rows and the element type, zeroes the new rows', () => {
    const a = Int32Array.of(5, -6, 7);
    const b = grown(a, 6);
    expect(b).toBeInstanceOf(Int32Array);
    expect([...b]).toEqual([5, -6, 7, 0, 0, 0]);
    const f = grown(Float64Array.of(0.5, 1e300), 3);
    expect(f).toBeInstanceOf(Float64Array);
    expect([...f]).toEqual([0.5, 1e300, 0]);
  });
});
