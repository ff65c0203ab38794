import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Sample } from '@s4/core';
import { formatLine, parseLineProtocol, PRECISIONS, toColumns, toMillis, type Precision } from './lineprotocol.js';

const parse = (text: string, precision: Precision = 'ns', now = 0) => parseLineProtocol(text, { precision, now });
const one = (text: string, precision: Precision = 'ns', now = 0) => {
  const r = parse(text, precision, now);
  expect(r.issues).toEqual([]);
  expect(r.samples).toHaveLength(1);
  return { ...r.samples[0]!, tags: { ...r.samples[0]!.tags }, fields: { ...r.samples[0]!.fields } };
};
const issue = (text: string) => {
  const r = parse(text);
  expect(r.issues.length, JSON.stringify(r)).toBeGreaterThan(0);
  return r.issues[0]!;
};

describe('line protocol parser', () => {
  it('reads a multi-field line as one sample with typed fields', () => {
    expect(one('cpu,host=a,region=eu\\ west usage=0.5,n=3i,u=7u,ok=t,name="x \\"y\\" z" 1700000000123456789')).toEqual({
      metric: 'cpu',
      tags: { host: 'a', region: 'eu west' },
      ts: 1700000000123,
      fields: { usage: 0.5, n: 3, u: 7, ok: true, name: 'x "y" z' },
    });
  });

  it('converts every precision to milliseconds (truncating) and uses now without a timestamp', () => {
    expect(one('m v=1 1700000000', 's').ts).toBe(1_700_000_000_000);
    expect(one('m v=1 1700000000123', 'ms').ts).toBe(1_700_000_000_123);
    expect(one('m v=1 1700000000123999', 'us').ts).toBe(1_700_000_000_123);
    expect(one('m v=1 1700000000123999999', 'ns').ts).toBe(1_700_000_000_123);
    expect(one('m v=1 999', 'ns').ts).toBe(0);
    expect(one('m v=1 2', 'm').ts).toBe(120_000);
    expect(one('m v=1 2', 'h').ts).toBe(7_200_000);
    expect(one('m v=1', 'ns', 42).ts).toBe(42);
    expect(one('m v=1   ', 'ns', 42).ts).toBe(42);
  });

  it('reads every boolean spelling, floats with exponents and signs, and keeps strings as strings', () => {
    for (const t of ['t', 'T', 'true', 'True', 'TRUE']) expect(one(`m v=${t}`).fields.v).toBe(true);
    for (const f of ['f', 'F', 'false', 'False', 'FALSE']) expect(one(`m v=${f}`).fields.v).toBe(false);
    expect(one('m a=-1.5e3,b=+2,c=.5,d=1.,e=1E-2').fields).toEqual({ a: -1500, b: 2, c: 0.5, d: 1, e: 0.01 });
    expect(one('m a=-12i,b=0u,c="12",d=""').fields).toEqual({ a: -12, b: 0, c: '12', d: '' });
  });

  // The escaping table of the line protocol reference, case by case.
  it('unescapes as the spec says', () => {
    expect(one('my\\ metric,t=1 v=1').metric).toBe('my metric');
    expect(one('my\\,metric v=1').metric).toBe('my,metric');
    expect(one('my=metric v=1').metric).toBe('my=metric');
    expect(one('my\\=metric v=1').metric).toBe('my\\=metric');
    expect(one('m,k\\ e\\,y\\==v\\ a\\,l\\=ue f\\ i\\,e\\=ld=1').tags).toEqual({ 'k e,y=': 'v a,l=ue' });
    expect(one('m,k\\ e\\,y\\==v\\ a\\,l\\=ue f\\ i\\,e\\=ld=1').fields).toEqual({ 'f i,e=ld': 1 });
    expect(one('m s="a,b c=d"').fields.s).toBe('a,b c=d');
    expect(one('m s="back\\\\slash \\"q\\" \\n literal"').fields.s).toBe('back\\slash "q" \\n literal');
    expect(one('m,path=C:\\dir v=1').tags).toEqual({ path: 'C:\\dir' });
    expect(one('m,path=C:\\\\dir v=1').tags).toEqual({ path: 'C:\\dir' });
    expect(one('m s="emoji 🚀 and ünïcode"').fields.s).toBe('emoji 🚀 and ünïcode');
    expect(one('m s="two\nlines"').fields.s).toBe('two\nlines');
  });

  it('skips blank lines, comments, CRLF endings and leading whitespace; numbers lines across a multi-line string', () => {
    const r = parse('# header\r\n\r\n  m v=1 1000000\r\nm s="a\nb" 2000000\n\n# x\nm v=3 3000000\n', 'ns');
    expect(r.issues).toEqual([]);
    expect(r.samples.map((s) => s.ts)).toEqual([1, 2, 3]);
    expect(r.lines).toEqual([3, 4, 8]);
  });

  it('names the line and column of every bad line, and keeps reading after one', () => {
    const r = parse('m v=1\ncpu\nm v=abc\nm v="abc\n');
    expect(r.samples).toHaveLength(1);
    expect(r.issues).toEqual([
      { line: 2, column: 4, message: 'the line has no fields (expected a space, then field=value)' },
      { line: 3, column: 5, message: 'field "v": "abc" is not a float, integer (i), unsigned (u), "string" or boolean' },
      { line: 4, column: 5, message: 'the string value of field "v" has no closing quote' },
    ]);
    expect(issue('m v=1 12x')).toMatchObject({ column: 7 });
    expect(issue('m v=1 12x').message).toMatch(/bad timestamp "12x"/);
    expect(issue('m v=1 -5').message).toMatch(/before 1970/);
    expect(issue('m v=1 5 extra').message).toMatch(/after the timestamp/);
    expect(issue('m,t=1,t=2 v=1')).toMatchObject({ column: 7, message: 'tag key "t" appears twice' });
    expect(issue('m v=1,v=2')).toMatchObject({ column: 7, message: 'field key "v" appears twice' });
    expect(issue('m,t v=1').message).toBe('tag "t" has no "=value"');
    expect(issue('m,t= v=1').message).toBe('empty value of tag "t"');
    expect(issue(',t=1 v=1').message).toBe('empty measurement');
    expect(issue('m v=').message).toBe('field "v" has no value');
    expect(issue('m =1').message).toBe('empty field key');
    expect(issue('m v=1.5i').message).toMatch(/not an integer/);
    expect(issue('m v=-1u').message).toMatch(/not an unsigned integer/);
    expect(issue('m v=9007199254740993i').message).toMatch(/beyond ±2\^53/);
    expect(issue('m v=NaN').message).toMatch(/not a float/);
  });

  it('stops collecting issues at maxIssues', () => {
    const r = parseLineProtocol('x\n'.repeat(500), { precision: 'ns', now: 0, maxIssues: 7 });
    expect(r.issues).toHaveLength(7);
  });
});

// Names line protocol can carry: no newline, and a measurement not starting with '#'.
const name = fc.string({ minLength: 1, maxLength: 12, unit: fc.oneof(fc.constantFrom(',', ' ', '=', '\\', '"', 'é', '🚀', 'a', '\t'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }).filter((s) => !/[\r\n]/.test(s) && s !== '__proto__');
const value = fc.oneof(
  fc.double({ noNaN: true, noDefaultInfinity: true }).map((v) => (Object.is(v, -0) ? 0 : v)),
  fc.integer(),
  fc.boolean(),
  fc.string({ unit: fc.oneof(fc.constantFrom('"', '\\', ',', ' ', '=', '\n'), fc.string({ unit: 'binary', minLength: 1, maxLength: 1 })) }),
);
const sample: fc.Arbitrary<Sample> = fc.record({
  metric: name.filter((s) => !s.startsWith('#') && !/^[ \t]/.test(s)),
  tags: fc.dictionary(name, name, { maxKeys: 4 }),
  ts: fc.integer({ min: 0, max: 4_102_444_800_000 }),
  fields: fc.dictionary(name, value, { minKeys: 1, maxKeys: 5 }),
});

describe('line protocol as columns', () => {
  it('groups lines by series text, aligning fields with nulls and keeping each line number', () => {
    const parsed = parse('cpu,h=a u=1 1000000\nmem v=5 1000000\ncpu,h=a s="x",u=2 2000000\n\ncpu,h=a u=3 3000000');
    expect(toColumns(parsed).map((g) => ({ ...g, tags: { ...g.tags }, fields: { ...g.fields } }))).toEqual([
      { metric: 'cpu', tags: { h: 'a' }, ts: [1, 2, 3], fields: { u: [1, 2, 3], s: [null, 'x', null] }, lines: [1, 3, 5] },
      { metric: 'mem', tags: {}, ts: [1], fields: { v: [5] }, lines: [2] },
    ]);
  });
});

describe('line protocol round trip', () => {
  it('parse(format(sample)) is the sample, one line or many', () => {
    fc.assert(
      fc.property(fc.array(sample, { minLength: 1, maxLength: 5 }), (samples) => {
        const text = samples.map(formatLine).join('\n');
        const r = parseLineProtocol(text, { precision: 'ms', now: 0 });
        expect(r.issues).toEqual([]);
        // The columnar mode groups exactly as toColumns groups the samples.
        const plainSeries = (list: ReturnType<typeof toColumns>) => list.map((g) => ({ ...g, tags: { ...g.tags }, fields: { ...g.fields } }));
        expect(plainSeries(parseLineProtocol(text, { precision: 'ms', now: 0, columns: true }).series)).toEqual(plainSeries(toColumns(r)));
        expect(r.samples.map((s) => ({ ...s, tags: { ...s.tags }, fields: { ...s.fields } }))).toEqual(samples.map((s) => ({ ...s, tags: { ...s.tags }, fields: { ...s.fields } })));
      }),
      { numRuns: 300 },
    );
  });

  it('reads timestamps and floats by their characters exactly as toMillis and Number do', () => {
    fc.assert(
      fc.property(fc.stringMatching(/^[1-9]\d{0,18}$/), fc.constantFrom(...PRECISIONS), fc.double({ noNaN: true, noDefaultInfinity: true }), (digits, precision, v) => {
        const want = toMillis(digits, precision);
        fc.pre(Number.isSafeInteger(want));
        const r = parseLineProtocol(`m v=${v} ${digits}`, { precision, now: 0, columns: true });
        expect(r.issues).toEqual([]);
        expect(r.series[0]!.ts).toEqual([want]);
        // The line carries String(v): the shortest text that reads back as v, but "0" for -0.
        expect(r.series[0]!.fields.v).toEqual([Number(String(v))]);
      }),
      { numRuns: 300 },
    );
  });

  it('refuses what line protocol cannot carry', () => {
    expect(() => formatLine({ metric: '#m', tags: {}, ts: 0, fields: { v: 1 } })).toThrow(/#/);
    expect(() => formatLine({ metric: 'm', tags: {}, ts: 0, fields: { v: Number.NaN } })).toThrow(/NaN/);
    expect(() => formatLine({ metric: 'm', tags: {}, ts: 0, fields: { v: [1] } })).toThrow(/only numbers/);
    expect(() => formatLine({ metric: 'm', tags: {}, ts: 0, fields: {} })).toThrow(/at least one field/);
  });
});
