import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createHash } from 'node:crypto';
import { SeriesIdentities, canonicalSeries, seriesId, tagsMatch } from './model.js';
import { shardOf } from './shard.js';
import { windowsOverlapping } from './time.js';

describe('series identity', () => {
  it('does not depend on tag order', () => {
    const a = seriesId({ metric: 'cpu', tags: { host: 'a', dc: 'x' } });
    const b = seriesId({ metric: 'cpu', tags: { dc: 'x', host: 'a' } });
    expect(a).toBe(b);
    expect(a).toMatch(/^[0-9a-f]{16}$/);
  });

  it('is the first 8 bytes of SHA-256 of the canonical form as UTF-8, in hex (ids are stored: they must never change)', () => {
    // Golden: ids written by every earlier version.
    expect(seriesId({ metric: 'cpu', tags: { host: 'a', dc: 'x' } })).toBe('ca9817ca6ff82f21');
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.dictionary(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), { maxKeys: 4 }), (metric, tags) => {
        const want = createHash('sha256').update(canonicalSeries({ metric, tags }), 'utf8').digest('hex').slice(0, 16);
        expect(seriesId({ metric, tags })).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('cannot be forged by a tag value that looks like another tag', () => {
    const a = canonicalSeries({ metric: 'm', tags: { a: '1",b="2' } });
    const b = canonicalSeries({ metric: 'm', tags: { a: '1', b: '2' } });
    expect(a).not.toBe(b);
  });

  it('matches tag selectors by equality', () => {
    expect(tagsMatch({ a: '1', b: '2' }, { a: '1' })).toBe(true);
    expect(tagsMatch({ a: '1' }, { a: '2' })).toBe(false);
    expect(tagsMatch({ a: '1' }, { c: '1' })).toBe(false);
  });

  it('spreads series over shards', () => {
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 1600; i++) counts[shardOf(seriesId({ metric: 'm', tags: { i: String(i) } }), 16)]++;
    for (const c of counts) expect(c).toBeGreaterThan(50);
  });

  it('takes a shard from the first 8 hex digits of an id, as parseInt reads them (anything else too)', () => {
    const hex = fc.string({ unit: fc.constantFrom(...'0123456789abcdefABCDEF'), minLength: 8, maxLength: 16 });
    fc.assert(
      fc.property(fc.oneof(hex, fc.string({ maxLength: 12 }), hex.map((h) => `${h.slice(0, 3)}x${h.slice(4)}`)), fc.integer({ min: 1, max: 4096 }), (id, shards) => {
        expect(shardOf(id, shards)).toBe(Number.parseInt(id.slice(0, 8), 16) % shards);
      }),
    );
  });

  it('lists the windows a half-open range touches', () => {
    const h = 3_600_000;
    expect(windowsOverlapping(0, h)).toEqual([0]);
    expect(windowsOverlapping(h - 1, h + 1)).toEqual([0, h]);
    expect(windowsOverlapping(5, 5)).toEqual([]);
  });
});

describe('SeriesIdentities', () => {
  it('gives each tag set its own id, the id seriesId gives, whatever the values hold and in any tag order', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom('m', 'n'), fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.string({ unit: 'binary', maxLength: 6 }), { maxKeys: 3 })), { maxLength: 20 }), (keys) => {
        const ids = new SeriesIdentities(4);
        for (const [metric, tags] of keys) {
          const got = ids.of(metric, tags);
          expect(got.id).toBe(seriesId({ metric, tags }));
          expect(got.key).toEqual({ metric, tags });
          expect(got.tagCount).toBe(Object.keys(tags).length);
          expect(got.longestTagValue).toBe(Math.max(0, ...Object.values(tags).map((v) => v.length)));
        }
      }),
    );
    // Values with the separators inside: still two series.
    const ids = new SeriesIdentities();
    expect(ids.of('m', { a: 'x\u00001\u0000b' }).id).not.toBe(ids.of('m', { a: 'x', b: 'b' }).id);
    expect(ids.of('m', { b: '2', a: '1' }).id).toBe(ids.of('m', { a: '1', b: '2' }).id);
  });

  it('keeps a working set of up to a generation of series (the size resize sets) and drops older ones beyond it', () => {
    const round = (ids: SeriesIdentities, n: number) => Array.from({ length: n }, (_, i) => ids.of('m', { host: `h${i}` }));
    const small = new SeriesIdentities(4);
    const first = round(small, 10);
    // 10 series through generations of 4: the first ones were dropped, so they come back as new identities.
    expect(round(small, 10)[0]).not.toBe(first[0]);
    const sized = new SeriesIdentities(4);
    sized.resize(10);
    const kept = round(sized, 10);
    const again = round(sized, 10);
    for (let i = 0; i < 10; i++) expect(again[i]).toBe(kept[i]);
  });
});
