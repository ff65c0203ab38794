import { describe, expect, it } from 'vitest';
import { parseTags, parseTime, seriesLabel } from './args.js';
import { sparkline } from './table.js';

describe('parseTime', () => {
  const now = Date.UTC(2026, 0, 1);
  it('reads ms, ISO dates, now and relative times', () => {
    expect(parseTime('1700000000000', 'from', now)).toBe(1700000000000);
    expect(parseTime('2026-01-01T00:00:00Z', 'from', now)).toBe(now);
    expect(parseTime('now', 'to', now)).toBe(now);
    expect(parseTime('-1h', 'from', now)).toBe(now - 3_600_000);
    expect(parseTime('now-30m', 'from', now)).toBe(now - 1_800_000);
    expect(parseTime('now+1d', 'to', now)).toBe(now + 86_400_000);
  });
  it('explains what it accepts', () => {
    expect(() => parseTime('yesterday', 'from', now)).toThrow(/--from: cannot read "yesterday"/);
  });
});

describe('parseTags and seriesLabel', () => {
  it('accepts k:v and k=v and prints sorted', () => {
    expect(parseTags(['b:2', 'a=1', 'url:http://x'])).toEqual({ b: '2', a: '1', url: 'http://x' });
    expect(seriesLabel('m', { b: '2', a: '1' })).toBe('m{a=1,b=2}');
    expect(() => parseTags(['nocolon'])).toThrow(/key:value/);
  });
});

describe('sparkline', () => {
  it('scales between min and max and buckets to the width', () => {
    expect(sparkline([0, 1, 2, 3, 4, 5, 6, 7], 8)).toBe('▁▂▃▄▅▆▇█');
    expect(sparkline(Array.from({ length: 100 }, (_, i) => i), 4)).toBe('▁▃▆█');
    expect(sparkline([5, 5, 5], 10)).toBe('▄▄▄');
  });
});
