import { describe, expect, it } from 'vitest';
import { catalogKey, hourName, parseSegmentKey, segmentKey } from './keys.js';

describe('object keys', () => {
  const ref = { ns: 'default', shard: 7 };
  const window = Date.UTC(2026, 10, 22, 4);

  it('names a segment part by shard, hour, part and fence', () => {
    expect(segmentKey(ref, window, 3, 42)).toBe('v1/default/seg/0007/20261122T04Z/p000003-f0000000042.s4seg');
    expect(hourName(window)).toBe('20261122T04Z');
  });

  it('parses what it names', () => {
    expect(parseSegmentKey(segmentKey(ref, window, 3, 42))).toEqual({ ns: 'default', shard: 7, window, part: 3, fence: 42 });
    expect(parseSegmentKey('v1/default/seg/0007/junk')).toBeNull();
  });

  it('never makes a key that is the folder of another key', () => {
    const keys = [segmentKey(ref, window, 1, 1), catalogKey(ref, window), 'v1/manifest.json'];
    for (const a of keys) for (const b of keys) if (a !== b) expect(b.startsWith(`${a}/`)).toBe(false);
  });
});
