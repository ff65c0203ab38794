import { describe, expect, it } from 'vitest';
import { LimitError, ValidationError } from '@s4/core';
import { parseWrite, type WriteLimits } from './validate.js';

const limits: WriteLimits = { maxSamplesPerRequest: 10, maxFieldsPerSample: 3, maxTags: 2, maxTagLength: 8, maxFutureMs: 1000 };
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
    expect(out[0]!.rows).toEqual([{ v: 1 }, { v: 2, s: 'x' }, { s: 'y' }]);
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
    expect(json({ samples: [{ metric: 'm', ts: 1, fields: { v: Number.NaN, w: -Infinity } }] })[0]!.rows[0]).toEqual({ v: Number.NaN, w: -Infinity });
    expect(() => json({ samples: [{ metric: 'm', ts: 1, fields: { s: '\ud800' } }] })).toThrow(/well-formed/);
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
