import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  KEY_FOLDERS,
  MANIFEST_KEY,
  catalogDaysKey,
  catalogKey,
  currentDayRollupKey,
  currentRollupKey,
  dayRollupKey,
  folderPrefix,
  hourName,
  isDayRollupKey,
  keySetHash,
  namespacePrefix,
  parseSegmentKey,
  daySegmentKey,
  isDaySegmentKey,
  rollupKeyDay,
  pendingDeletesKey,
  rollupKey,
  segmentKey,
  segmentShardPrefix,
} from './keys.js';

describe('object keys', () => {
  const ref = { ns: 'default', shard: 7 };
  const window = Date.UTC(2026, 10, 22, 4);
  const day = Date.UTC(2026, 10, 22);
  const source = '3f9c0a1b2c3d4e5f';

  it('names a segment part by shard, hour, part and fence', () => {
    expect(segmentKey(ref, window, 3, 42)).toBe('v1/default/seg/0007/20261122T04Z/p000003-f0000000042.s4seg');
    expect(hourName(window)).toBe('20261122T04Z');
  });

  it('names catalogs, day lists and rollups as keys.md specifies', () => {
    expect(MANIFEST_KEY).toBe('v1/manifest.json');
    expect(catalogKey(ref, day)).toBe('v1/default/cat/0007/20261122.s4cat');
    expect(catalogDaysKey(ref)).toBe('v1/default/cat/0007.days');
    expect(pendingDeletesKey(ref)).toBe('v1/default/cat/0007.deletes');
    expect(catalogKey(ref, day, 'rollup')).toBe('v1/default/rollup/cat/0007/20261122.s4cat');
    expect(catalogDaysKey(ref, 'rollup')).toBe('v1/default/rollup/cat/0007.days');
    expect(rollupKey(ref, window, source)).toBe(`v1/default/rollup/obj/0007/20261122T04Z/r-${source}.s4rol`);
    expect(dayRollupKey(ref, day, source)).toBe(`v1/default/rollup/obj/0007/20261122/d-${source}.s4rol`);
  });

  it('puts every key of a kind under its folder prefix', () => {
    expect(namespacePrefix('default')).toBe('v1/default/');
    expect(folderPrefix('default', KEY_FOLDERS.segments)).toBe('v1/default/seg/');
    const under = (key: string, folder: (typeof KEY_FOLDERS)[keyof typeof KEY_FOLDERS]) => expect(key.startsWith(folderPrefix(ref.ns, folder))).toBe(true);
    under(segmentKey(ref, window, 1, 1), KEY_FOLDERS.segments);
    under(segmentShardPrefix(ref), KEY_FOLDERS.segments);
    under(catalogKey(ref, day), KEY_FOLDERS.catalogs);
    under(catalogDaysKey(ref), KEY_FOLDERS.catalogs);
    under(pendingDeletesKey(ref), KEY_FOLDERS.catalogs);
    for (const key of [catalogKey(ref, day, 'rollup'), catalogDaysKey(ref, 'rollup'), rollupKey(ref, window, source), dayRollupKey(ref, day, source)]) under(key, KEY_FOLDERS.rollups);
  });

  it('parses what it names', () => {
    expect(parseSegmentKey(segmentKey(ref, window, 3, 42))).toEqual({ ns: 'default', shard: 7, window, part: 3, fence: 42, day: false });
    expect(parseSegmentKey(daySegmentKey(ref, day, 25, 43))).toEqual({ ns: 'default', shard: 7, window: day, part: 25, fence: 43, day: true });
    expect(isDaySegmentKey(daySegmentKey(ref, day, 25, 43))).toBe(true);
    expect(isDaySegmentKey(segmentKey(ref, window, 3, 42))).toBe(false);
    expect(parseSegmentKey('v1/default/seg/0007/junk')).toBeNull();
    expect(parseSegmentKey('v1/default/seg/0007/20261122/p000001-f0000000001.s4seg')).toBeNull();
    expect(rollupKeyDay(rollupKey(ref, window, source))).toBe(day);
    expect(rollupKeyDay(dayRollupKey(ref, day, source))).toBe(day);
    expect(rollupKeyDay(segmentKey(ref, window, 3, 42))).toBeNull();
    expect(pendingDeletesKey(ref, 'rollup')).toBe('v1/default/rollup/cat/0007.deletes');
  });

  it('never makes a key that is the folder of another key', () => {
    const keys = [
      segmentKey(ref, window, 1, 1),
      daySegmentKey(ref, day, 1, 1),
      pendingDeletesKey(ref, 'rollup'),
      catalogKey(ref, window),
      catalogDaysKey(ref),
      pendingDeletesKey(ref),
      catalogKey(ref, window, 'rollup'),
      catalogDaysKey(ref, 'rollup'),
      rollupKey(ref, window, source),
      dayRollupKey(ref, day, source),
      MANIFEST_KEY,
    ];
    for (const a of keys) for (const b of keys) if (a !== b) expect(b.startsWith(`${a}/`)).toBe(false);
  });

  it('hashes a set of keys whatever their order, as rollup.md specifies', () => {
    const parts = [segmentKey(ref, window, 2, 5), segmentKey(ref, window, 1, 5)];
    const expected = createHash('sha256').update([...parts].sort().join('\n')).digest('hex').slice(0, 16);
    expect(keySetHash(parts)).toBe(expected);
    expect(keySetHash([...parts].reverse())).toBe(expected);
    expect(currentRollupKey(ref, window, parts)).toBe(rollupKey(ref, window, expected));
    const hourly = [currentRollupKey(ref, window, parts)];
    expect(currentDayRollupKey(ref, day, hourly)).toBe(dayRollupKey(ref, day, keySetHash(hourly)));
  });

  it('tells day rollups from hourly ones', () => {
    expect(isDayRollupKey(dayRollupKey(ref, day, source))).toBe(true);
    expect(isDayRollupKey(rollupKey(ref, window, source))).toBe(false);
    expect(isDayRollupKey(segmentKey(ref, window, 1, 1))).toBe(false);
  });
});
