import { describe, expect, it } from 'vitest';
import { LimitError, ValidationError } from '@s4/core';
import { parseWrite, type WriteLimits } from './validate.js';

const limits: WriteLimits = { maxSamplesPerRequest: 10, maxFieldsPerSample: 3, maxTags: 2, maxTagLength: 8, maxFutureMs: 1000, maxNestingDepth: 4 };
const now = 1_000_000;
const json = (body: unknown) => parseWrite({ kind: 'json', body }, limits, now);

describe('parseWrite', () => {
  it('groups samples and columns of the same series, in request order', () => {
    const out = json({
      samples: [{ metric: 'm', tags: { b: '2', a: '1' }, ts: 5, fields: { v: 1 } }],
      series: [{ metric: 'm', tags: { a: '1', b: '2' }, ts: [3, 5], fields: { v: [2, null], s: ['x', 'y'] } }],
    });
    expect(out).toHaveLength(1);
    expect(out[0]!.ts).toEqual([5, 3, 5]);
    expect(out[0]!.fields).toEqual({ v: [1, 2, null], s: [null, 'x', 'y'] });
  });

  it('reads typed-array columns (MessagePack bodies) like plain arrays', () => {
    const out = json({ series: [{ metric: 'm', ts: Float64Array.of(1, 2), fields: { v: Float64Array.of(0.5, Number.NaN) } }] });
    expect(out[0]!.ts).toEqual([1, 2]);
    expect(out[0]!.fields).toEqual({ v: [0.5, Number.NaN] });
  });

  it('lists every problem with its place', () => {
    try {
      json({ series: [{ metric: 'm', ts: [1, -2, 3.5], fields: { v: [1, 2, undefined] } }] });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ValidationError);
      const paths = (e as ValidationError).issues.map((i) => i.path);
      expect(paths).toEqual(['series[0].ts[1]', 'series[0].ts[2]', 'series[0].fields.v[2]']);
    }
  });

  it('accepts NaN and infinities (MessagePack carries them) but not lone surrogates', () => {
    expect(json({ samples: [{ metric: 'm', ts: 1, fields: { v: Number.NaN, w: -Infinity } }] })[0]!.fields).toEqual({ v: [Number.NaN], w: [-Infinity] });
    expect(() => json({ samples: [{ metric: 'm', ts: 1, fields: { s: '\ud800' } }] })).toThrow(/well-formed/);
  });

  it('stores constructor, toString, valueOf and hasOwnProperty as the plain names they are, in rows and columns', () => {
    const names = ['constructor', 'toString', 'valueOf', 'hasOwnProperty'];
    const out = json({
      samples: [{ metric: 'm', tags: { constructor: 'c' }, ts: 1, fields: { constructor: 1, toString: 'x' } }],
      series: [{ metric: 'm', tags: { constructor: 'c' }, ts: [2], fields: { valueOf: [true], hasOwnProperty: [3] } }],
    });
    expect(out).toHaveLength(1);
    expect(Object.keys(out[0]!.fields).sort()).toEqual([...names].sort());
    expect(out[0]!.fields.constructor).toEqual([1, null]);
    expect(out[0]!.fields.hasOwnProperty).toEqual([null, 3]);
    // Columnar first, then a row: the adopted column map must not expose inherited names.
    const mixed = json({ series: [{ metric: 'm', ts: [1], fields: { a: [1] } }, { metric: 'm', ts: [2], fields: { toString: [2] } }] });
    expect(mixed[0]!.fields.toString).toEqual([null, 2]);
  });

  it('refuses __proto__ as a field name or tag key, naming it', () => {
    expect(() => json({ samples: [{ metric: 'm', ts: 1, fields: JSON.parse('{"__proto__": 1}') as object }] })).toThrow(/__proto__/);
    expect(() => json({ samples: [{ metric: 'm', tags: JSON.parse('{"__proto__": "x"}') as object, ts: 1, fields: { v: 1 } }] })).toThrow(/__proto__/);
  });

  it('refuses values nested deeper than the limit, without overflowing the stack at any depth', () => {
    const nest = (n: number) => {
      let v: unknown = 1;
      for (let i = 0; i < n; i++) v = i % 2 ? [v] : { k: v };
      return v;
    };
    expect(json({ samples: [{ metric: 'm', ts: 1, fields: { v: nest(4) } }] })).toHaveLength(1);
    for (const depth of [5, 2_000, 100_000]) {
      expect(() => json({ samples: [{ metric: 'm', ts: 1, fields: { v: nest(depth) } }] }), `depth ${depth}`).toThrow(/S4_MAX_NESTING_DEPTH=4/);
      expect(() => json({ series: [{ metric: 'm', ts: [1], fields: { v: [nest(depth)] } }] }), `columnar depth ${depth}`).toThrow(/S4_MAX_NESTING_DEPTH=4/);
    }
  });

  it('enforces each limit by name', () => {
    expect(() => json({ series: [{ metric: 'm', ts: Array.from({ length: 11 }, (_, i) => i), fields: {} }] })).toThrow(LimitError);
    expect(() => json({ samples: [{ metric: 'm', tags: { a: '1', b: '2', c: '3' }, ts: 1, fields: { v: 1 } }] })).toThrow(/S4_MAX_TAGS=2/);
    expect(() => json({ samples: [{ metric: 'm', tags: { a: '123456789' }, ts: 1, fields: { v: 1 } }] })).toThrow(/S4_MAX_TAG_LENGTH=8/);
    expect(() => json({ samples: [{ metric: 'm', ts: 1, fields: { a: 1, b: 2, c: 3, d: 4 } }] })).toThrow(/S4_MAX_FIELDS_PER_SAMPLE=3/);
    expect(() => json({ samples: [{ metric: 'm', ts: now + 1001, fields: { v: 1 } }] })).toThrow(/S4_MAX_FUTURE_MS=1000/);
    expect(json({ samples: [{ metric: 'm', ts: now + 1000, fields: { v: 1 } }] })).toHaveLength(1);
  });

  it('reads NDJSON line by line and names the bad line', () => {
    const text = '{"metric":"m","ts":1,"fields":{"v":1}}\n\n{"metric":"m","ts":2,"fields":{"v":2}}\n';
    expect(parseWrite({ kind: 'ndjson', text }, limits, now)[0]!.ts).toEqual([1, 2]);
    expect(() => parseWrite({ kind: 'ndjson', text: `${text}nope` }, limits, now)).toThrow(/line 4/);
  });
});

describe('RecordEncoder', () => {
  it('writes plain MessagePack that decodes to the same samples, absent fields left out', async () => {
    const { RecordEncoder, decodeRecords } = await import('./records.js');
    const enc = new RecordEncoder(1 << 16);
    const names = ['i', 'f', 's', 'n', 'neg0', 'big', 'nested'];
    const columns = [
      [1, -2_147_483_648, 2_147_483_647],
      [1.5, Number.NaN, -Infinity],
      ['a', null, 'ü'],
      [null, null, true],
      [-0, 0, -0],
      [2 ** 40, -(2 ** 53 - 1), 3e300],
      [{ a: [1, { b: null }] }, [], null],
    ];
    const ts = [0, 1_767_225_600_000, Number.MAX_SAFE_INTEGER];
    const keys = enc.keysOf(names);
    ts.forEach((t, i) => enc.record(t, keys, columns, i, 'm'));
    const out = decodeRecords(enc.take());
    expect(out.ts).toEqual(ts);
    names.forEach((n, c) => {
      const got = out.fields[n]!;
      columns[c]!.forEach((v, i) => expect(Object.is(got[i], v) || JSON.stringify(got[i]) === JSON.stringify(v)).toBe(true));
    });
  });

  it('writes all-number appends as one batch, read back in arrival order with later records', async () => {
    const { RecordEncoder, decodeRecords } = await import('./records.js');
    const enc = new RecordEncoder(1 << 16);
    expect(enc.batch([5, 1, 5], ['v', 'w'], [[1.5, Number.NaN, -0], [null, 2, null]], [0, 1, 2])).toBe(true);
    expect(enc.batch([1, 2], ['s'], [['x', 'y']], [0, 1])).toBe(false);
    enc.record(7, enc.keysOf(['s']), [['z']], 0, 'm');
    const out = decodeRecords(enc.take());
    expect(out.ts).toEqual([5, 1, 5, 7]);
    expect(out.fields.v).toEqual([1.5, Number.NaN, -0, null]);
    expect(Object.is(out.fields.v![2], -0)).toBe(true);
    expect(out.fields.w).toEqual([null, 2, null, null]);
    expect(out.fields.s).toEqual([null, null, null, 'z']);
  });

  it('refuses a record above the limit', async () => {
    const { RecordEncoder } = await import('./records.js');
    const enc = new RecordEncoder(100);
    expect(() => enc.record(1, enc.keysOf(['s']), [['x'.repeat(200)]], 0, 'm')).toThrow(/S4_MAX_RECORD_BYTES=100/);
  });
});

/** Whether a fields map nests deeper than `max` levels (the limit parseWrite checks before the schema). */
function deeper(v: unknown, max: number, depth = -1): boolean {
  if (typeof v !== 'object' || v === null) return false;
  if (depth >= max) return true;
  return Object.values(v).some((x) => deeper(x, max, depth + 1));
}

describe('plainSample (the hand-written fast path)', () => {
  it('never accepts what the schema refuses, and reads what it accepts the same way', async () => {
    const fc = (await import('fast-check')).default;
    const { plainSample, sampleSchema } = await import('./validate.js');
    // Mostly valid parts, so that samples with exactly one bad part are common.
    const name = fc.constantFrom('m', 'cpu', 'value', '', 'a\u0001', '\ud800', 'x'.repeat(257));
    // Nested records: mostly valid, now and then a lone surrogate, a `__proto__` key, a typed
    // array, a Date or a value deeper than the limit (4) somewhere inside.
    const odd = fc.constantFrom<unknown>('\ud800', Float64Array.of(1), new Date(0), undefined, [[[[[1]]]]], JSON.parse('{"__proto__": 1}'), Object.create(null) as object);
    const key = fc.oneof({ weight: 5, arbitrary: fc.constantFrom('prn', 'snr', 'x', '', 'ü', 'constructor', 'toString') }, fc.constantFrom('\ud800'));
    const { nested } = fc.letrec<{ nested: unknown }>((tie) => ({
      nested: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        { weight: 4, arbitrary: fc.oneof(fc.double(), fc.boolean(), fc.constant(null), fc.string({ unit: 'binary' })) },
        fc.array(tie('nested'), { maxLength: 3 }),
        fc.dictionary(key, tie('nested'), { maxKeys: 3 }),
        { weight: 1, arbitrary: odd },
      ),
    }));
    const sample = fc.record(
      {
        metric: fc.oneof({ weight: 5, arbitrary: fc.constant('m') }, name, fc.constant(7)),
        tags: fc.oneof({ weight: 3, arbitrary: fc.dictionary(fc.constantFrom('k', 'site'), fc.constantFrom('v', 'x'), { maxKeys: 2 }) }, fc.dictionary(name, name, { maxKeys: 2 }), fc.constant(null)),
        ts: fc.oneof({ weight: 5, arbitrary: fc.nat() }, fc.constantFrom(1.5, -1, '5', 2 ** 53)),
        fields: fc.dictionary(
          fc.oneof({ weight: 5, arbitrary: fc.constant('value') }, name),
          fc.oneof({ weight: 5, arbitrary: fc.double() }, fc.boolean(), fc.constant(null), name, nested, fc.constant(undefined)),
          { maxKeys: 2 },
        ),
        extra: fc.integer(),
      },
      { requiredKeys: ['metric', 'ts', 'fields'] },
    );
    fc.assert(
      fc.property(sample, (raw) => {
        const fast = plainSample(raw, 4);
        const schema = sampleSchema.safeParse(raw);
        if (fast !== null) {
          expect(deeper(raw.fields, 4)).toBe(false);
          expect(schema.success).toBe(true);
          expect(fast).toEqual(schema.data);
        }
      }),
      { numRuns: 20_000 },
    );
  });
});

describe('plainColumns (the hand-written fast path of `series` entries)', () => {
  it('answers every request as the schema path does: the same series, columns and errors', async () => {
    const fc = (await import('fast-check')).default;
    const { parseWriteBySchema } = await import('./validate.js');
    const name = fc.constantFrom('m', 'cpu', 'value', '', 'a\u0001', '\ud800', 'x'.repeat(257), 'constructor');
    const odd = fc.constantFrom<unknown>('\ud800', Float64Array.of(1), new Date(0), undefined, [[[[[1]]]]], JSON.parse('{"__proto__": 1}'), Object.create(null) as object);
    const value = fc.oneof({ weight: 8, arbitrary: fc.double() }, fc.boolean(), fc.constant(null), fc.string(), fc.constant({ a: [1, { b: 'x' }] }), odd);
    const ts = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: now + 2000 }) }, fc.constantFrom<unknown>(-1, 1.5, '5', 2 ** 53, Number.NaN, null));
    const entry = fc.integer({ min: 0, max: 3 }).chain((n) =>
      fc.record(
        {
          metric: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('m', 'n') }, name, fc.constant(7)),
          tags: fc.oneof(
            { weight: 4, arbitrary: fc.dictionary(fc.constantFrom('k', 'site'), fc.constantFrom('v', 'x', '123456789'), { maxKeys: 2 }) },
            fc.dictionary(name, name, { maxKeys: 3 }),
            fc.constant(null),
          ),
          ts: fc.oneof({ weight: 6, arbitrary: fc.array(ts, { minLength: n, maxLength: n }) }, fc.constant(Float64Array.of(1, 2).subarray(0, n)), fc.array(ts, { maxLength: 3 })),
          fields: fc.dictionary(
            fc.oneof({ weight: 5, arbitrary: fc.constantFrom('value', 'w', 'x', 'y') }, name),
            fc.oneof({ weight: 6, arbitrary: fc.array(value, { minLength: n, maxLength: n }) }, fc.array(value, { maxLength: 3 }), fc.constant(Float64Array.of(0.5, Number.NaN).subarray(0, n))),
            { maxKeys: 4 },
          ),
          extra: fc.integer(),
        },
        { requiredKeys: ['metric', 'ts', 'fields'] },
      ),
    );
    const outcome = (f: () => unknown) => {
      try {
        return { ok: f() };
      } catch (e) {
        return { error: e instanceof ValidationError ? e.issues : e instanceof LimitError ? (e as Error).message : e };
      }
    };
    // Samples of the same series mixed in: rows and columns of one series meet in one group.
    const sample = fc.record(
      {
        metric: fc.constantFrom('m', 'n'),
        tags: fc.dictionary(fc.constantFrom('k', 'site'), fc.constantFrom('v', 'x'), { maxKeys: 2 }),
        ts,
        fields: fc.dictionary(fc.constantFrom('value', 'w', 'x', 'y', 'z'), value, { maxKeys: 5 }),
      },
      { requiredKeys: ['metric', 'ts', 'fields'] },
    );
    const wide = { ...limits, maxSamplesPerRequest: 100 };
    fc.assert(
      fc.property(fc.array(entry, { minLength: 1, maxLength: 4 }), fc.array(sample, { maxLength: 3 }), (series, samples) => {
        // Each path gets its own copy: adopted arrays may be appended to.
        const body = () => structuredClone(samples.length ? { series, samples } : { series });
        const fast = outcome(() => parseWrite({ kind: 'json', body: body() }, wide, now));
        const schema = outcome(() => parseWriteBySchema({ kind: 'json', body: body() }, wide, now));
        expect(fast).toEqual(schema);
      }),
      { numRuns: 5_000 },
    );
  });

  it('appends to an array two entries share without touching the request', () => {
    const t = [1];
    const v = [0.5];
    const out = json({ series: [{ metric: 'm', ts: t, fields: { v } }, { metric: 'm', ts: t, fields: { v } }] });
    expect(out[0]!.ts).toEqual([1, 1]);
    expect(out[0]!.fields.v).toEqual([0.5, 0.5]);
    expect(t).toEqual([1]);
  });
});
