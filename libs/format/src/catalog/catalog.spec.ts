import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { decodeCatalog, encodeCatalog, type Catalog, type CatalogEntry } from './catalog.js';

const int = fc.integer({ min: -(2 ** 53) + 1, max: 2 ** 53 - 1 });
const nat = fc.nat({ max: 2 ** 53 - 1 });
const entry: fc.Arbitrary<CatalogEntry> = fc.record({
  window: int,
  part: fc.nat({ max: 999_999 }),
  fence: nat,
  key: fc.string({ unit: 'binary' }),
  size: nat,
  footerOffset: nat,
  footerLength: nat,
  series: nat,
  samples: nat,
  minTs: int,
  maxTs: int,
  metrics: fc.option(fc.uniqueArray(fc.string({ unit: 'binary' }), { maxLength: 256 }), { nil: null }),
  createdAt: nat,
});
const catalog: fc.Arbitrary<Catalog> = fc.record({
  ns: fc.string({ unit: 'binary' }),
  shard: fc.nat({ max: 9999 }),
  day: int,
  entries: fc.uniqueArray(entry, { selector: (e) => `${e.window}/${e.part}`, maxLength: 30 }),
});
const sorted = (c: Catalog): Catalog => ({ ...c, entries: [...c.entries].sort((a, b) => a.window - b.window || a.part - b.part) });

describe('catalog', () => {
  it('round-trips, entries sorted by window then part', () => {
    fc.assert(
      fc.property(catalog, (c) => {
        expect(decodeCatalog(encodeCatalog(c))).toEqual(sorted(c));
      }),
    );
  });

  it('encodes equal catalogs to equal bytes', () => {
    fc.assert(
      fc.property(catalog, (c) => {
        expect(encodeCatalog({ ...c, entries: [...c.entries].reverse() })).toEqual(encodeCatalog(c));
      }),
    );
  });

  it('detects every flipped byte', () => {
    fc.assert(
      fc.property(catalog, fc.nat(), fc.integer({ min: 1, max: 255 }), (c, at, mask) => {
        const b = encodeCatalog(c);
        b[at % b.length]! ^= mask;
        expect(() => decodeCatalog(b)).toThrow(CorruptDataError);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses entries the decoder would reject', () => {
    const e: CatalogEntry = { window: 0, part: 0, fence: 1, key: 'k', size: 1.5, footerOffset: 0, footerLength: 0, series: 0, samples: 0, minTs: 0, maxTs: 0, metrics: null, createdAt: 0 };
    expect(() => encodeCatalog({ ns: 'n', shard: 0, day: 0, entries: [e] })).toThrow(/size=1.5/);
    const many = Array.from({ length: 257 }, (_, i) => `m${i}`);
    expect(() => encodeCatalog({ ns: 'n', shard: 0, day: 0, entries: [{ ...e, size: 1, metrics: many }] })).toThrow(/store null/);
  });
});
