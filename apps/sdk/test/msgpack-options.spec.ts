import { describe, expect, it } from 'vitest';
import { msgpack } from '@s4/format';
import { packr, unpackr } from '../src/codec.js';

/**
 * The SDK stays standalone (no @s4 package at run time), so it builds its own msgpackr instances;
 * they must keep the options pinned in libs/format/src/msgpack.ts (docs/format/README.md), or the
 * SDK would write bytes the server reads differently, or read the server's bytes differently.
 */
type Options = Record<string, unknown>;
const pick = (o: object, names: readonly string[]) => Object.fromEntries(names.map((n) => [n, (o as Options)[n]]));

// The options msgpackr consults when packing, and when unpacking.
const PACK = ['useRecords', 'moreTypes', 'variableMapSize'] as const;
const UNPACK = ['useRecords', 'moreTypes', 'mapsAsObjects', 'int64AsType'] as const;

const samples: unknown[] = [
  { metric: 'cpu', tags: { host: 'a' }, ts: new Float64Array([1, 2]), fields: { value: new Float64Array([0.5, -0]), s: ['x', null] } },
  [1, -1, 2 ** 31, -(2 ** 53) + 1, 1.5, NaN, Infinity, -0, true, null, 'ü😀'],
  Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`k${i}`, i])),
  { nested: { deep: [[[]]], big: 2n ** 60n } },
];

describe('SDK MessagePack options', () => {
  it('pack with the options pinned by @s4/format', () => {
    expect(pick(packr, PACK)).toEqual(pick(msgpack, PACK));
  });

  it('unpack with the options pinned by @s4/format', () => {
    expect(pick(unpackr, UNPACK)).toEqual(pick(msgpack, UNPACK));
  });

  it('write the same bytes and read them the same way', () => {
    for (const v of samples) {
      const bytes = msgpack.pack(v);
      expect(Buffer.from(packr.pack(v)).equals(bytes)).toBe(true);
      expect(unpackr.unpack(bytes)).toEqual(msgpack.unpack(bytes));
    }
  });
});
