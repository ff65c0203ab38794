import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeDayList, encodeDayList } from './day-list.js';

const DAY = 86_400_000;
const days = fc.uniqueArray(fc.integer({ min: -100_000, max: 100_000 }), { maxLength: 50 }).map((d) => d.map((x) => x * DAY).sort((a, b) => a - b));

describe('catalog day list', () => {
  it('round-trips', () => {
    fc.assert(
      fc.property(days, (d) => {
        expect(decodeDayList(encodeDayList(d))).toEqual(d);
      }),
    );
  });

  it('is the JSON document catalog.md specifies', () => {
    expect(Buffer.from(encodeDayList([0, DAY])).toString('utf8')).toBe('{"version":1,"days":[0,86400000]}');
  });

  it('refuses another version or shape', () => {
    expect(() => decodeDayList(Buffer.from('{"version":2,"days":[]}'))).toThrow(/unknown version 2/);
    expect(() => decodeDayList(Buffer.from('{"version":1,"days":{}}'))).toThrow(/day list/);
    expect(() => decodeDayList(Buffer.from('{"version":1'))).toThrow(SyntaxError);
  });
});
