import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { packr, unpackr } from './codec.js';
import { S4DecodeError } from './errors.js';
import { assembleShredded, toRecordBatch, withoutCodegen } from './records.js';
import type { JsonValue } from './types.js';

const KIND = (v: JsonValue): number => (v === null ? 0 : typeof v === 'boolean' ? 1 : typeof v === 'number' ? 2 : typeof v === 'string' ? 3 : Array.isArray(v) ? 4 : 5);

/**
 * Node columns of a list of values as the server sends them (docs/api.md, "Columnar chunks";
 * apps/api/src/roles/api/output/columns-wire.ts): a minimal shredder, so that the assembler is
 * checked against values rather than against another assembler.
 */
function toWire(values: readonly JsonValue[]): Record<string, unknown> {
  const kinds = values.map(KIND);
  const set = new Set(kinds);
  const out: Record<string, unknown> = { c: values.length, k: set.size === 1 ? kinds[0] : set.size === 0 ? 0 : -1, a: true };
  if (set.size > 1) out.ks = Uint8Array.from(kinds);
  const nums = values.filter((v) => typeof v === 'number');
  if (nums.length > 0) out.n = Float64Array.from(nums);
  const strs = values.filter((v) => typeof v === 'string');
  if (strs.length > 0) out.s = strs;
  const bools = values.filter((v) => typeof v === 'boolean');
  if (bools.length > 0) {
    const b = new Uint8Array((bools.length + 7) >> 3);
    bools.forEach((x, i) => x && (b[i >> 3]! |= 1 << (i & 7)));
    out.b = b;
  }
  const arrays = values.filter((v) => Array.isArray(v));
  if (arrays.length > 0) {
    out.l = Uint32Array.from(arrays.map((a) => a.length));
    if (arrays.some((a) => a.length > 0)) out.e = toWire(arrays.flat(1));
  }
  const objects = values.filter((v): v is { [k: string]: JsonValue } => v !== null && typeof v === 'object' && !Array.isArray(v));
  if (objects.length > 0) {
    const shapes: string[][] = [];
    const ids = objects.map((o) => {
      const keys = Object.keys(o);
      let id = shapes.findIndex((s) => s.length === keys.length && s.every((k, j) => k === keys[j]));
      if (id < 0) id = shapes.push(keys) - 1;
      return id;
    });
    out.h = shapes;
    if (shapes.length > 1) out.i = Uint32Array.from(ids);
    const members: unknown[] = [];
    for (const key of new Set(shapes.flat()))
      members.push(
        key,
        toWire(objects.filter((o) => Object.hasOwn(o, key)).map((o) => o[key]!)),
      );
    if (members.length > 0) out.m = members;
  }
  return out;
}

/** Through MessagePack with the SDK's own options, as the wire carries it. */
const overTheWire = (node: unknown): unknown => unpackr.unpack(packr.pack(node));

const doc = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, fc.constant(null), fc.boolean(), fc.double(), fc.integer(), fc.string({ unit: 'grapheme' }), tie('array'), tie('object')),
  array: fc.array(tie('value'), { maxLength: 5 }),
  object: fc.dictionary(fc.oneof(fc.string({ unit: 'grapheme', maxLength: 4 }), fc.constantFrom('a', 'b', 'sats', '0', '12', 'ü-key', '__proto__', 'toString')), tie('value'), { maxKeys: 5, noNullPrototype: true }),
})).value as fc.Arbitrary<JsonValue>;

/** Records of one shape mostly, a key now and then, a type that changes: what a device sends. */
const recordLike = fc.record({
  lat: fc.double(),
  sats: fc.array(fc.record({ prn: fc.integer({ min: 1, max: 40 }), snr: fc.double(), used: fc.boolean() }, { requiredKeys: ['prn', 'snr'], noNullPrototype: true }), { maxLength: 14 }),
  meta: fc.record({ fw: fc.oneof(fc.string(), fc.double()), tag: fc.constant('x') }, { requiredKeys: ['fw'], noNullPrototype: true }),
}, { noNullPrototype: true }) as fc.Arbitrary<JsonValue>;

describe('assembleShredded', () => {
  it('gives back every value exactly, key order included, with and without generated builders', () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(doc, recordLike), { maxLength: 30 }), (values) => {
        const wire = overTheWire(toWire(values));
        const got = assembleShredded(wire, values.length, 'f');
        expect(got).toStrictEqual(values);
        expect(JSON.stringify(got)).toBe(JSON.stringify(values));
        expect(withoutCodegen(() => assembleShredded(wire, values.length, 'f'))).toStrictEqual(values);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps a key named __proto__ as data, never as the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": 1}, "a": 2}') as JsonValue;
    for (const got of [assembleShredded(toWire([value, value]), 2, 'f'), withoutCodegen(() => assembleShredded(toWire([value]), 1, 'f'))]) {
      const first = got[0] as Record<string, unknown>;
      expect(Object.getPrototypeOf(first)).toBe(Object.prototype);
      expect(Object.keys(first)).toEqual(['__proto__', 'a']);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    }
  });

  it('leaves out what a projection did not select (a: false), keeping objects and arrays above it', () => {
    // {imu: {vibration: 0.5, note: 'bump'}, sats: [{prn: 3, snr: 40}]} projected to imu.vibration and sats.prn
    const wire = {
      c: 2,
      k: 5,
      a: false,
      h: [['imu', 'sats']],
      m: [
        'imu',
        { c: 2, k: 5, a: false, h: [['vibration', 'note'], ['vibration']], i: Uint32Array.from([0, 1]), m: ['vibration', { c: 2, k: 2, a: true, n: Float64Array.from([0.5, 0.25]) }] },
        'sats',
        { c: 2, k: 4, a: false, l: Uint32Array.from([1, 0]), e: { c: 1, k: 5, a: false, h: [['prn', 'snr']], m: ['prn', { c: 1, k: 2, a: true, n: Float64Array.from([3]) }, 'snr', { c: 1, k: 2, a: false }] } },
      ],
    };
    expect(assembleShredded(wire, 2, 'f')).toStrictEqual([
      { imu: { vibration: 0.5 }, sats: [{ prn: 3 }] },
      { imu: { vibration: 0.25 }, sats: [] },
    ]);
  });

  it('refuses node columns whose counts do not agree, with an S4DecodeError', () => {
    const good = toWire([[1, 2], [3]]);
    expect(() => assembleShredded({ ...good, l: Uint32Array.from([2, 2]) }, 2, 'f')).toThrow(S4DecodeError);
    expect(() => assembleShredded({ ...good, l: Uint32Array.from([1, 1]) }, 2, 'f')).toThrow(S4DecodeError);
    const objs = toWire([{ a: 1 }, { a: 2 }]);
    expect(() => assembleShredded({ ...objs, m: ['a', { c: 1, k: 2, a: true, n: Float64Array.from([1]) }] }, 2, 'f')).toThrow(S4DecodeError);
    expect(() => assembleShredded({ c: 2, k: 2, a: true, n: Float64Array.from([1]) }, 2, 'f')).toThrow(S4DecodeError);
    expect(() => assembleShredded({ c: 2, k: 7, a: true }, 2, 'f')).toThrow(S4DecodeError);
  });
});

describe('RecordBatch.records()', () => {
  it('builds each record with the fields it has, in the server order', () => {
    const sats: JsonValue[] = [[{ prn: 1 }], null, [{ prn: 2 }, { prn: 3 }]];
    const diag: JsonValue[] = [null, [{ code: 7 }], null];
    const chunk = {
      metric: 'm',
      tags: { machine: 'a' },
      ts: Float64Array.from([1, 2, 3]),
      fields: { battery: Float64Array.from([0.5, 0.25, 0.125]) },
      shredded: ['sats', toWire(sats), 'diag', toWire(diag)],
      names: ['sats', 'battery', 'diag'],
    };
    const batch = toRecordBatch(overTheWire(chunk), (_n, c) => c as Float64Array);
    const fields = [...batch.records()].map((r) => r.fields);
    expect(fields).toStrictEqual([{ sats: [{ prn: 1 }], battery: 0.5 }, { battery: 0.25, diag: [{ code: 7 }] }, { sats: [{ prn: 2 }, { prn: 3 }], battery: 0.125 }]);
    expect(fields.map((f) => Object.keys(f))).toEqual([['sats', 'battery'], ['battery', 'diag'], ['sats', 'battery']]);
  });
});
