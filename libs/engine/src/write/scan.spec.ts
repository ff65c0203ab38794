import { describe, expect, it } from 'vitest';
import { LimitError, ValidationError } from '@s4/core';
import { runSteps } from '../concurrency.js';
import { Packr } from 'msgpackr';
import { PackedValue, RecordEncoder, msgpack } from '@s4/format';
import { distinctSeries, scanMsgpackSteps, scanSeriesSteps, sizeSeriesCaches } from './scan.js';
import { parseWrite, type SeriesWrite, type WriteLimits } from './validate.js';

const limits: WriteLimits = { maxSamplesPerRequest: 100, maxFieldsPerSample: 3, maxTags: 2, maxTagLength: 8, maxFutureMs: 1000, maxNestingDepth: 4 };
const now = 1_000_000;
const scan = (text: string) => runSteps(scanSeriesSteps(Buffer.from(text)));

const outcome = (f: () => SeriesWrite[]) => {
  try {
    // A scanned entry is its own SeriesWrite (with the scanner's members besides): compared as one,
    // its packed values as the values they hold.
    return { ok: f().map(({ id, key, ts, fields }) => ({ id, key, ts, fields: unpacked(fields) })) };
  } catch (e) {
    return { error: e instanceof ValidationError ? e.issues : e instanceof LimitError ? (e as Error).message : e };
  }
};

/** The columns with each PackedValue unpacked, and null values left out (the row path drops them; the encoder skips them). */
function unpacked(fields: Record<string, unknown[]>): Record<string, unknown[]> {
  const out: Record<string, unknown[]> = {};
  for (const [f, col] of Object.entries(fields)) {
    const values = col.map((v) => (v instanceof PackedValue ? v.unpack() : v));
    if (values.some((v) => v !== null)) out[f] = values;
  }
  return out;
}

/** What the JSON path answers for a text, and what the scanned path answers when the scanner takes it (null when it does not). */
function bothWays(text: string): { json: unknown; scanned: unknown } | null {
  const scanned = scan(text);
  if (!scanned) return null;
  // Whatever the scanner takes is valid JSON.
  const body = JSON.parse(text) as unknown;
  return {
    json: outcome(() => parseWrite({ kind: 'json', body }, limits, now)),
    scanned: outcome(() => parseWrite({ kind: 'scanned', scanned }, limits, now)),
  };
}

describe('scanSeriesSteps (write bodies read from their text)', () => {
  it('reads the scrape and single-sample shapes as JSON.parse and the validator do', () => {
    const series = '{"series":[{"metric":"m","tags":{"host":"h1","dc":"a"},"ts":[5,6],"fields":{"value":[1.5,-0],"w":[2,3e2]}},{"metric":"m","ts":[7],"fields":{"value":[0.1]}}]}';
    const samples = '{"samples":[{"metric":"m","tags":{"k":"v"},"ts":5,"fields":{"value":12.25}},{"metric":"m","tags":{"k":"v"},"ts":6,"fields":{"value":-3}}]}';
    for (const text of [series, samples]) {
      const r = bothWays(text)!;
      expect(r).not.toBeNull();
      expect(r.scanned).toEqual(r.json);
      expect((r.scanned as { ok: unknown[] }).ok.length).toBeGreaterThan(0);
    }
  });

  it('leaves anything else to the JSON path', () => {
    for (const text of [
      '{ "series":[{"metric":"m","ts":[1],"fields":{"v":[1]}}]}', // whitespace
      '{"series":[{"metric":"m\\u0041","ts":[1],"fields":{"v":[1]}}]}', // an escape
      '{"series":[{"ts":[1],"metric":"m","fields":{"v":[1]}}]}', // another order
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":["x\\"y"]}}]}', // an escape in a value
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":{"a":1,"a":2}}}]}', // a key twice in a value
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":{"b":1,"10":2}}}]}', // an integer-like key (JSON.parse lists it first)
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":{"__proto__":1}}}]}',
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":[1, 2]}}]}', // whitespace in a value
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":["ü"]}}]}',
      '{"samples":[{"metric":"m","ts":1,"fields":{"v":[tru]}}]}',
      `{"samples":[{"metric":"m","ts":1,"fields":{"v":${'['.repeat(65)}${']'.repeat(65)}}}]}`, // deeper than the packer goes
      '{"series":[{"metric":"m","ts":[1.5],"fields":{"v":[1]}}]}',
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[1,2]}}]}', // lengths differ
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[1],"v":[2]}}]}', // a name twice
      '{"series":[{"metric":"","ts":[1],"fields":{"v":[1]}}]}', // a name the validator refuses
      '{"series":[{"metric":"m","ts":[01],"fields":{"v":[1]}}]}', // not JSON
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[.5]}}]}',
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[1]}}]} ',
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[1]}}],"samples":[]}',
      '{"series":[]}',
      '{"samples":[{"metric":"m","ts":1,"fields":{}}]}',
      // __proto__ as any name: the JSON path words the refusal (body.ts no longer looks for it before the scan)
      '{"series":[{"metric":"__proto__","ts":[1],"fields":{"v":[1]}}]}',
      '{"series":[{"metric":"m","tags":{"__proto__":"x"},"ts":[1],"fields":{"v":[1]}}]}',
      '{"series":[{"metric":"m","ts":[1],"fields":{"__proto__":[1]}}]}',
      '{"samples":[{"metric":"m","ts":1,"fields":{"__proto__":1}}]}',
      '{"series":[{"metric":"m","tags":{"k":"\u00fc"},"ts":[1],"fields":{"v":[1]}}]}',
      '{"series":[{"metric":"m","tags":{"k":"ü"},"ts":[1],"fields":{"v":[1]}}]}', // not ASCII
    ])
      expect(scan(text), text).toBeNull();
    // A batch of rows goes the JSON way (quicker there); a few samples are scanned.
    const rows = (n: number) => `{"samples":[${Array.from({ length: n }, (_, i) => `{"metric":"m","ts":${i},"fields":{"v":${i}}}`).join(',')}]}`;
    expect(scan(rows(64))).not.toBeNull();
    expect(scan(rows(65))).toBeNull();
  });

  it('sends a body whose values break a limit the JSON way, with its wording', () => {
    const future = '{"series":[{"metric":"m","ts":[1,2000000],"fields":{"v":[1,2]}}]}';
    const wide = '{"samples":[{"metric":"m","ts":1,"fields":{"a":1,"b":2,"c":3,"d":4}}]}';
    const tags = '{"series":[{"metric":"m","tags":{"a":"1","b":"2","c":"3"},"ts":[1],"fields":{"v":[1]}}]}';
    for (const text of [future, wide, tags]) {
      const r = bothWays(text)!;
      expect(r.scanned).toEqual(r.json);
      expect(r.json).toHaveProperty('error');
    }
  });

  it('reads every JSON number as JSON.parse does', async () => {
    const fc = (await import('fast-check')).default;
    const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });
    const numberText = fc
      .tuple(fc.boolean(), fc.oneof(fc.constant('0'), fc.tuple(fc.constantFrom(...'123456789'), digits(0, 20)).map(([a, b]) => a + b)), fc.option(digits(1, 25)), fc.option(fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), digits(1, 3))))
      .map(([neg, int, frac, exp]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : exp.join('')}`);
    const text = fc.oneof(numberText, fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)));
    fc.assert(
      fc.property(text, (t) => {
        const scanned = scan(`{"series":[{"metric":"m","ts":[1],"fields":{"v":[${t}]}}]}`);
        expect(scanned).not.toBeNull();
        expect(Object.is(scanned!.entries[0]!.fields.v![0], JSON.parse(t))).toBe(true);
      }),
      { numRuns: 20_000 },
    );
  });

  it('answers every body it takes as the JSON path does, and takes only JSON (bodies and their one-character mutations)', async () => {
    const fc = (await import('fast-check')).default;
    const name = fc.constantFrom('m', 'cpu', 'value', 'ü', 'constructor', 'a b', '', 'x'.repeat(9));
    const num = fc.oneof({ weight: 6, arbitrary: fc.double({ noNaN: true, noDefaultInfinity: true }) }, fc.integer(), fc.constantFrom(0.1, 12.25, -0, 1e21, 5e-324));
    const ts = fc.oneof({ weight: 8, arbitrary: fc.integer({ min: 0, max: now + 2000 }) }, fc.constantFrom(1.5, 2 ** 53));
    const tags = fc.dictionary(fc.oneof({ weight: 4, arbitrary: fc.constantFrom('host', 'dc') }, name), fc.oneof({ weight: 4, arbitrary: fc.constantFrom('h1', 'h2', 'a') }, name), { maxKeys: 3 });
    const entry = fc.integer({ min: 1, max: 3 }).chain((n) =>
      fc.record(
        {
          metric: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('m', 'n') }, name),
          tags,
          ts: fc.array(ts, { minLength: n, maxLength: n }),
          fields: fc.dictionary(fc.oneof({ weight: 5, arbitrary: fc.constantFrom('value', 'w') }, name), fc.array(num, { minLength: n, maxLength: n }), { minKeys: 1, maxKeys: 4 }),
        },
        { requiredKeys: ['metric', 'ts', 'fields'] },
      ),
    );
    const sample = fc.record(
      { metric: fc.constantFrom('m', 'n'), tags, ts, fields: fc.dictionary(fc.constantFrom('value', 'w', 'x', 'y'), num, { minKeys: 1, maxKeys: 4 }) },
      { requiredKeys: ['metric', 'ts', 'fields'] },
    );
    const body = fc.oneof(fc.array(entry, { minLength: 1, maxLength: 4 }).map((series) => JSON.stringify({ series })), fc.array(sample, { minLength: 1, maxLength: 4 }).map((samples) => JSON.stringify({ samples })));
    const mutated = fc.tuple(body, fc.nat(), fc.constantFrom('', '"', ',', ']', '}', '[', '{', ':', '0', '-', '.', 'e', ' ', '\\', '\u0001', 'ü'), fc.boolean()).map(([text, at, c, replace]) => {
      const i = at % text.length;
      return text.slice(0, i) + c + text.slice(replace ? i + 1 : i);
    });
    let taken = 0;
    fc.assert(
      fc.property(fc.oneof(body, mutated), (text) => {
        let r: ReturnType<typeof bothWays>;
        try {
          r = bothWays(text);
        } catch (e) {
          // JSON.parse refused a text the scanner took.
          throw new Error(`scanned an invalid body ${text}: ${(e as Error).message}`, { cause: e });
        }
        if (r) {
          taken++;
          expect(r.scanned).toEqual(r.json);
          // What body.ts relies on to skip the text, the UTF-8 check and the __proto__ and escape checks.
          const bytes = Buffer.from(text);
          expect(bytes.every((b) => b >= 0x20 && b < 0x7f && b !== 0x5c)).toBe(true);
          expect(scan(text)!.text()).toBe(text);
        }
      }),
      { numRuns: 20_000 },
    );
    // The property holds something: most generated bodies are the usual shape.
    expect(taken).toBeGreaterThan(2_000);
  });

  it('packs nested values, strings and booleans to the bytes the JSON path and the record encoder make (random records and their mutations)', async () => {
    const fc = (await import('fast-check')).default;
    const deep: WriteLimits = { ...limits, maxNestingDepth: 5 };
    // Plain ASCII mostly; now and then what the packer refuses (a quote or backslash escaped, a control character, non-ASCII).
    const text = fc.string({ unit: fc.oneof({ weight: 300, arbitrary: fc.constantFrom(...'abcxyz_-. 09AZ:{}[],') }, fc.constantFrom('"', '\\', 'é', '\u0001', '😀')), maxLength: 6 });
    const key = fc.oneof({ weight: 300, arbitrary: fc.oneof(fc.constantFrom('lat', 'lon', 'sats', 'prn', 'snr', 'used', 'x', 'constructor', 'toString'), fc.nat(30).map((n) => `k${n}`)) }, fc.constantFrom('10', '0', '01', '4294967295', '-1', '__proto__'), { weight: 10, arbitrary: text });
    const leaf = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.integer({ min: -40_000, max: 70_000 }),
      fc.constantFrom(-0, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 0.1),
      fc.boolean(),
      fc.constant(null),
      text,
      fc.string({ unit: fc.constantFrom(...'abc '), minLength: 20, maxLength: 300 }),
    );
    // JSON text written by hand, so that an object may name a key twice.
    const { value } = fc.letrec<{ value: string }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf.map((v) => JSON.stringify(v)),
        // Long ones now and then: 16 entries or more take a longer header.
        fc.oneof({ weight: 6, arbitrary: fc.array(tie('value'), { maxLength: 4 }) }, fc.array(tie('value'), { minLength: 15, maxLength: 17 })).map((a) => `[${a.join(',')}]`),
        fc
          .oneof(
            { weight: 6, arbitrary: fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 4 }) },
            fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, minLength: 15, maxLength: 17 }),
            fc.array(fc.tuple(key, tie('value')), { maxLength: 4 }),
          )
          .map((m) => `{${m.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`),
      ),
    }));
    const field = fc.constantFrom('rec', 'pos', 'fw', 'ok');
    const sample = fc.tuple(fc.constantFrom('m', 'n'), fc.integer({ min: 0, max: now }), fc.uniqueArray(fc.tuple(field, value), { selector: ([f]) => f, minLength: 1, maxLength: 3 }));
    const samples = fc
      .array(sample, { minLength: 1, maxLength: 4 })
      .map((list) => `{"samples":[${list.map(([m, ts, fs]) => `{"metric":"${m}","ts":${ts},"fields":{${fs.map(([f, v]) => `"${f}":${v}`).join(',')}}}`).join(',')}]}`);
    const series = fc
      .tuple(fc.integer({ min: 1, max: 3 }), fc.uniqueArray(field, { minLength: 1, maxLength: 3 }))
      .chain(([n, names]) => fc.tuple(fc.constant(n), fc.constant(names), fc.array(fc.array(value, { minLength: n, maxLength: n }), { minLength: names.length, maxLength: names.length })))
      .map(([n, names, cols]) => `{"series":[{"metric":"m","ts":[${Array.from({ length: n }, (_, i) => i + 1).join(',')}],"fields":{${names.map((f, c) => `"${f}":[${cols[c]!.join(',')}]`).join(',')}}}]}`);
    const body = fc.oneof(samples, series);
    const mutated = fc.tuple(body, fc.nat(), fc.constantFrom('', '"', ',', ']', '}', '[', '{', ':', '0', '-', 'e', ' ', '\\', 'n', 't'), fc.boolean()).map(([t, at, c, replace]) => {
      const i = at % t.length;
      return t.slice(0, i) + c + t.slice(replace ? i + 1 : i);
    });
    /** Each sample's record as the write path encodes it. */
    const records = (out: SeriesWrite[]) => {
      const enc = new RecordEncoder(1 << 20);
      return out.map((s) => {
        for (let i = 0; i < s.ts.length; i++) enc.recordOf(s.ts[i]!, s.fields, i, s.key.metric);
        return Buffer.from(enc.take()).toString('hex');
      });
    };
    let taken = 0;
    let nested = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: body }, mutated), (t) => {
        const scanned = scan(t);
        if (!scanned) return;
        taken++;
        if (scanned.entries.some((e) => Object.values(e.fields).some((col) => col.some((v) => v instanceof PackedValue)))) nested++;
        const json = JSON.parse(t) as unknown;
        const a = outcome(() => parseWrite({ kind: 'json', body: json }, deep, now));
        const b = outcome(() => parseWrite({ kind: 'scanned', scanned }, deep, now));
        expect(b).toEqual(a);
        if ('ok' in a) expect(records(parseWrite({ kind: 'scanned', scanned: scan(t)! }, deep, now))).toEqual(records(parseWrite({ kind: 'json', body: JSON.parse(t) }, deep, now)));
        expect(Buffer.from(t).every((c) => c >= 0x20 && c < 0x7f && c !== 0x5c)).toBe(true);
      }),
      { numRuns: 5_000 },
    );
    expect(taken).toBeGreaterThan(1_000);
    expect(nested).toBeGreaterThan(500);
  });

  it('reads an NDJSON body of samples as the NDJSON path does, errors by line included (random bodies and their mutations)', async () => {
    const fc = (await import('fast-check')).default;
    const deep: WriteLimits = { ...limits, maxNestingDepth: 5, maxSamplesPerRequest: 6 };
    const nested = fc.oneof(
      fc.constantFrom('{"lat":47.28056495897472,"lon":8.2}', '[{"prn":1,"snr":26.600000381469727,"used":false},{"prn":4}]', '"4.12.3"', 'true', '{}', '[[[[[1]]]]]'),
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
    );
    const tags = fc.constantFrom('', ',"tags":{"machine":"m1"}', ',"tags":{"a":"1","b":"2","c":"3"}', ',"tags":{"machine":"far-too-long"}', ',"tags":{}');
    const line = fc
      .tuple(fc.constantFrom('m', 'n'), tags, fc.integer({ min: 0, max: now + 2000 }), fc.uniqueArray(fc.tuple(fc.constantFrom('pos', 'sats', 'fw', 'ok'), nested), { selector: ([f]) => f, minLength: 1, maxLength: 4 }))
      .map(([m, t, ts, fs]) => `{"metric":"${m}"${t},"ts":${ts},"fields":{${fs.map(([f, v]) => `"${f}":${v}`).join(',')}}}`);
    const body = fc.tuple(fc.array(line, { minLength: 1, maxLength: 8 }), fc.constantFrom('', '\n', '\n\n', '\r\n')).map(([ls, end]) => ls.join('\n') + end);
    const mutated = fc.tuple(body, fc.nat(), fc.constantFrom('', '\n', ',', '}', '{', '"', ' ', '0', '\r'), fc.boolean()).map(([t, at, c, replace]) => {
      const i = at % t.length;
      return t.slice(0, i) + c + t.slice(replace ? i + 1 : i);
    });
    const scanNd = (t: string) => runSteps(scanSeriesSteps(Buffer.from(t), true));
    let taken = 0;
    let failed = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: body }, mutated), (t) => {
        const scanned = scanNd(t);
        if (!scanned) return;
        taken++;
        const a = outcome(() => parseWrite({ kind: 'ndjson', text: t }, deep, now));
        const b = outcome(() => parseWrite({ kind: 'scanned', scanned }, deep, now));
        if ('error' in a) failed++;
        expect(b).toEqual(a);
      }),
      { numRuns: 5_000 },
    );
    expect(taken).toBeGreaterThan(1_500);
    // Refusals by line (tags over their limits, too many samples, too deep, in the future) are compared too.
    expect(failed).toBeGreaterThan(300);
  });

  it('packs a value of 70,000 elements and a record of many members with the long headers', () => {
    const big = `[${Array(70_000).fill('7').join(',')}]`;
    const wide = `{${Array.from({ length: 300 }, (_, i) => `"k${i}":${i}`).join(',')}}`;
    for (const v of [big, wide, '[]', '{}', '""', `"${'x'.repeat(70_000)}"`]) {
      const t = `{"samples":[{"metric":"m","ts":1,"fields":{"v":${v}}}]}`;
      const scanned = scan(t)!;
      expect(scanned, v.slice(0, 20)).not.toBeNull();
      const enc = new RecordEncoder(1 << 20);
      const [a] = parseWrite({ kind: 'scanned', scanned }, limits, now);
      enc.recordOf(1, a!.fields, 0, 'm');
      const x = Buffer.from(enc.take());
      const [b] = parseWrite({ kind: 'json', body: JSON.parse(t) }, limits, now);
      enc.recordOf(1, b!.fields, 0, 'm');
      expect(x.equals(Buffer.from(enc.take()))).toBe(true);
    }
  });

  it('sends a body nested deeper than S4_MAX_NESTING_DEPTH the JSON way, with its wording', () => {
    const t = `{"samples":[{"metric":"m","ts":1,"fields":{"v":{"a":[[[[1]]]]}}}]}`;
    expect(scan(t)!.entries[0]!.depth).toBe(5);
    const json = outcome(() => parseWrite({ kind: 'json', body: JSON.parse(t) }, limits, now));
    expect(json).toHaveProperty('error');
    expect(outcome(() => parseWrite({ kind: 'scanned', scanned: scan(t)! }, limits, now))).toEqual(json);
    const ok = `{"samples":[{"metric":"m","ts":1,"fields":{"v":{"a":[[[1]]]}}}]}`;
    expect(outcome(() => parseWrite({ kind: 'scanned', scanned: scan(ok)! }, limits, now))).toHaveProperty('ok');
  });

  it('recognises a series by its text again, and tag order makes no other series', () => {
    const a = scan('{"series":[{"metric":"m","tags":{"a":"1","b":"2"},"ts":[1],"fields":{"v":[1]}}]}')!;
    const b = scan('{"series":[{"metric":"m","tags":{"a":"1","b":"2"},"ts":[2],"fields":{"v":[2]}}]}')!;
    const c = scan('{"series":[{"metric":"m","tags":{"b":"2","a":"1"},"ts":[3],"fields":{"v":[3]}}]}')!;
    expect(b.entries[0]!.key).toBe(a.entries[0]!.key);
    expect(c.entries[0]!.id).toBe(a.entries[0]!.id);
    const out = parseWrite({ kind: 'scanned', scanned: scan('{"series":[{"metric":"m","tags":{"a":"1","b":"2"},"ts":[1],"fields":{"v":[1]}},{"metric":"m","tags":{"b":"2","a":"1"},"ts":[2],"fields":{"v":[2]}}]}')! }, limits, now);
    expect(out).toHaveLength(1);
    expect(out[0]!.ts).toEqual([1, 2]);
  });
});

describe('the key-text cache across its generations', () => {
  it('finds a series moved up from the older generation again as the same entry, with the same key object', () => {
    const entry = (tags: string, ts: number) => `{"metric":"gen","tags":{${tags}},"ts":[${ts}],"fields":{"v":[${ts}]}}`;
    const body = (entries: string[]) => `{"series":[${entries.join(',')}]}`;
    sizeSeriesCaches(1_000);
    try {
      const first = scan(body([entry('"host":"kept","dc":"x"', 1)]))!.entries[0]!;
      // 1,500 others: the kept series is now in the older generation (and the arenas grew past their first size).
      for (let from = 0; from < 1_500; from += 500) scan(body(Array.from({ length: 500 }, (_, i) => entry(`"host":"other-${from + i}-${'x'.repeat(60)}","dc":"y"`, 1))));
      const moved = scan(body([entry('"host":"kept","dc":"x"', 2)]))!.entries[0]!;
      expect(moved.key).toBe(first.key);
      expect(moved.id).toBe(first.id);
      expect([moved.tagCount, moved.longestTagValue]).toEqual([2, 4]);
      // Its text was copied into the current generation: found there, as that entry.
      const again = scan(body([entry('"host":"kept","dc":"x"', 3)]))!.entries[0]!;
      expect(again.key).toBe(first.key);
      expect([again.id, again.tagCount, again.longestTagValue]).toEqual([first.id, 2, 4]);
      // A text of the same length that differs in one character is another series.
      const near = scan(body([entry('"host":"kepT","dc":"x"', 4)]))!.entries[0]!;
      expect(near.id).not.toBe(first.id);
      expect(near.key.tags).toEqual({ host: 'kepT', dc: 'x' });
    } finally {
      sizeSeriesCaches(65_536);
    }
  });
});

describe('marks across generations', () => {
  it('keeps the mark of a series moved up to the newer generation when the older one is dropped: no new series is given it', () => {
    const entry = (tags: string) => `{"metric":"marks","tags":{${tags}},"ts":[1],"fields":{"v":[1]}}`;
    const one = (tags: string) => scan(`{"series":[${entry(tags)}]}`)!.entries[0]!;
    sizeSeriesCaches(10);
    try {
      one('"h":"kept"');
      // Ten others: the generation turns over, and the kept series is in the older one.
      for (let i = 0; i < 10; i++) one(`"h":"o${i}"`);
      const kept = one('"h":"kept"');
      // Nine more and one: the generation it moved up from is dropped (its other series' marks let go).
      for (let i = 0; i < 9; i++) one(`"h":"p${i}"`);
      // New series take the marks let go (the last of them drops the kept series' generation, after
      // taking its mark): none may take the kept series' mark while it holds it.
      const fresh = Array.from({ length: 10 }, (_, i) => one(`"h":"q${i}"`));
      expect(fresh.map((e) => e.mark)).not.toContain(kept.mark);
    } finally {
      sizeSeriesCaches(65_536);
    }
  });
});

describe('distinctSeries (a scrape body needs no grouping)', () => {
  const entry = (tags: string, ts: number) => `{"metric":"m","tags":{${tags}},"ts":[${ts}],"fields":{"v":[${ts}]}}`;
  const body = (entries: string[]) => `{"series":[${entries.join(',')}]}`;

  it('tells a body of distinct series from one naming a series twice, by its id', () => {
    expect(distinctSeries(scan(body([entry('"a":"1"', 1), entry('"a":"2"', 1)]))!)).toBe(true);
    expect(distinctSeries(scan(body([entry('"a":"1"', 1), entry('"a":"1"', 2)]))!)).toBe(false);
    expect(distinctSeries(scan(body([entry('"a":"1","b":"2"', 1), entry('"b":"2","a":"1"', 2)]))!)).toBe(false);
    // Asked again, the same entries are still distinct (a mark is per request).
    const twice = scan(body([entry('"a":"1"', 1), entry('"a":"2"', 1)]))!;
    expect(distinctSeries(twice)).toBe(true);
    expect(distinctSeries(twice)).toBe(true);
  });

  it('still sees a series twice after the text cache turned over its generations', () => {
    const a = '"k":"x","j":"y"';
    const b = '"j":"y","k":"x"';
    scan(body([entry(a, 1)]));
    for (let round = 0; round < 3; round++) {
      // 70,000 other series: more than a generation of the text cache (and of the identity cache below it).
      for (let from = 0; from < 70_000; from += 10_000) scan(body(Array.from({ length: 10_000 }, (_, i) => entry(`"n":"${round}-${from + i}"`, 1))));
      const both = scan(body([entry(a, 2), entry(b, 3)]))!;
      expect(both.entries[0]!.id).toBe(both.entries[1]!.id);
      expect(distinctSeries(both)).toBe(false);
      const out = parseWrite({ kind: 'scanned', scanned: both }, { ...limits, maxSamplesPerRequest: 10 }, now);
      expect(out).toHaveLength(1);
      expect(out[0]!.ts).toEqual([2, 3]);
    }
  }, 60_000);

  it('does not answer for a body during whose scan the text cache dropped a generation (the grouping path takes it)', () => {
    // More new series than a generation holds, in one body: the cache turns over while it is scanned.
    const big = scan(body(Array.from({ length: 70_000 }, (_, i) => entry(`"big":"${i}"`, 1))))!;
    expect(big.marksAgree).toBe(false);
    expect(distinctSeries(big)).toBe(false);
    expect(parseWrite({ kind: 'scanned', scanned: big }, { ...limits, maxSamplesPerRequest: 100_000 }, now)).toHaveLength(70_000);
    expect(scan(body([entry('"a":"1"', 1)]))!.marksAgree).toBe(true);
  }, 60_000);
});

describe('scanMsgpackSteps (MessagePack write bodies read from their bytes)', () => {
  const scanMp = (bytes: Uint8Array) => runSteps(scanMsgpackSteps(bytes));
  /** Each sample's record as the write path encodes it. */
  const records = (out: SeriesWrite[]) => {
    const enc = new RecordEncoder(1 << 20);
    return out.map((s) => {
      for (let i = 0; i < s.ts.length; i++) enc.recordOf(s.ts[i]!, s.fields, i, s.key.metric);
      return Buffer.from(enc.take()).toString('hex');
    });
  };
  /** The two ways' answers, and their records when both take the body; null when the scan leaves it. */
  const bothWays = (bytes: Uint8Array, l: WriteLimits = limits) => {
    const scanned = scanMp(bytes);
    if (!scanned) return null;
    // Whatever the scan takes, msgpackr decodes.
    const general = () => parseWrite({ kind: 'json', body: msgpack.unpack(bytes) as unknown }, l, now);
    // A nested -0 is packed as 0 (msgpackr's rule, which the record encoder follows either way: the
    // records are compared byte for byte below); the decoded values are compared with it so.
    const a = noNegativeZero(outcome(general));
    const b = noNegativeZero(outcome(() => parseWrite({ kind: 'scanned', scanned }, l, now)));
    const bytesOk = 'ok' in a ? { general: records(general()), scanned: records(parseWrite({ kind: 'scanned', scanned: scanMp(bytes)! }, l, now)) } : null;
    return { general: a, scanned: b, bytesOk };
  };
  const noNegativeZero = <T>(v: T): T =>
    (Object.is(v, -0) ? 0 : Array.isArray(v) ? v.map(noNegativeZero) : v !== null && typeof v === 'object' ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, noNegativeZero(x)])) : v) as T;
  // As the SDK packs a write (apps/sdk codec.ts: useRecords false, moreTypes, variableMapSize).
  const sdk = new Packr({ useRecords: false, moreTypes: true, variableMapSize: true });

  it("reads the SDK's columnar write as msgpackr and the validator do, records byte for byte", () => {
    const body = sdk.pack({
      series: [
        { metric: 'm', tags: { host: 'h1', dc: 'a' }, ts: [5, 6], fields: { value: [1.5, -0], w: [2, 300] } },
        { metric: 'rec', tags: {}, ts: [7, 8], fields: { r: [{ lat: 45.299999, sats: [{ prn: 3, snr: 40.5, used: true }], fw: 'v1.2' }, null], ok: [true, 'x'] } },
      ],
    });
    const r = bothWays(body)!;
    expect(r).not.toBeNull();
    expect(r.scanned).toEqual(r.general);
    expect((r.scanned as { ok: unknown[] }).ok).toHaveLength(2);
    expect(r.bytesOk!.scanned).toEqual(r.bytesOk!.general);
    // A series written as MessagePack is the series written as JSON.
    const json = scan('{"series":[{"metric":"m","tags":{"host":"h1","dc":"a"},"ts":[9],"fields":{"value":[1]}}]}')!;
    expect(json.entries[0]!.id).toBe(scanMp(body)!.entries[0]!.id);
  });

  it('leaves anything else to msgpackr and the general path', () => {
    const entry = { metric: 'm', tags: { k: 'v' }, ts: [1], fields: { v: [1] } };
    for (const value of [
      { series: [{ tags: { k: 'v' }, metric: 'm', ts: [1], fields: { v: [1] } }] }, // another order
      { series: [{ metric: 'm', ts: [1], fields: { v: [1] } }] }, // no tags
      { series: [entry], more: 1 }, // another member
      { samples: [{ metric: 'm', ts: 1, fields: { v: 1 } }] }, // samples
      { series: [{ ...entry, tags: { k: 'é' } }] }, // not ASCII
      { series: [{ ...entry, tags: { k: 'a"b' } }] }, // a quote in a key text
      { series: [{ ...entry, fields: { v: ['é'] } }] }, // a string value not ASCII
      { series: [{ ...entry, fields: { v: [{ '1': 2 }] } }] }, // an integer-like key
      { series: [{ ...entry, fields: { v: [Number.NaN] } }] }, // not finite
      { series: [{ ...entry, fields: { v: [new Uint8Array(2)] } }] }, // binary
      { series: [{ ...entry, fields: { v: [new Date(0)] } }] }, // an extension type
      { series: [{ ...entry, fields: { v: [1, 2] } }] }, // a column longer than ts
      { series: [{ ...entry, ts: [-1] }] }, // a negative timestamp
      { series: [{ ...entry, ts: [1.5] }] }, // a fractional one
      { series: [{ ...entry, fields: {} }] }, // no field
    ])
      expect(scanMp(sdk.pack(value))).toBeNull();
    const whole = sdk.pack({ series: [entry] });
    expect(scanMp(whole)).not.toBeNull();
    expect(scanMp(whole.subarray(0, whole.length - 1))).toBeNull(); // cut short
    expect(scanMp(Buffer.concat([whole, Buffer.of(0xc0)]))).toBeNull(); // trailing bytes
    // A key twice in one map (msgpackr keeps the last).
    const twice = Buffer.from(sdk.pack({ series: [{ ...entry, fields: { v: [{ aa: 1, ab: 2 }] } }] }));
    twice[twice.indexOf(Buffer.from('ab'))] = 0x61;
    twice[twice.indexOf(Buffer.from('ab')) + 1] = 0x61;
    expect(scanMp(twice)).toBeNull();
  });

  it('sends a body whose values break a limit the general way, with its wording', () => {
    const deep = sdk.pack({ series: [{ metric: 'm', tags: {}, ts: [1], fields: { v: [[[[[[1]]]]]] } }] });
    const r = bothWays(deep)!;
    expect(r.scanned).toEqual(r.general);
    expect(JSON.stringify(r.scanned)).toContain('S4_MAX_NESTING_DEPTH');
    const wide = sdk.pack({ series: [{ metric: 'm', tags: {}, ts: [1], fields: { a: [1], b: [1], c: [1], d: [1] } }] });
    const w = bothWays(wide)!;
    expect(w.scanned).toEqual(w.general);
    expect('error' in (w.scanned as object)).toBe(true);
  });

  it('answers every body it takes as msgpackr and the general path do, records byte for byte (random bodies, other encoders, mutated bytes)', async () => {
    const fc = (await import('fast-check')).default;
    const deep: WriteLimits = { ...limits, maxNestingDepth: 5 };
    const text = fc.string({ unit: fc.oneof({ weight: 2000, arbitrary: fc.constantFrom(...'abcxyz_-. 09AZ:{}[],"\\') }, fc.constantFrom('é', '\u0001', '😀')), maxLength: 6 });
    const key = fc.oneof({ weight: 300, arbitrary: fc.oneof(fc.constantFrom('lat', 'lon', 'sats', 'prn', 'snr', 'used', 'x', 'constructor', 'toString'), fc.nat(30).map((n) => `k${n}`)) }, fc.constantFrom('10', '0', '01', '-1'), { weight: 10, arbitrary: text });
    const leaf = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }),
      fc.float({ noNaN: true, noDefaultInfinity: true }),
      fc.integer(),
      fc.integer({ min: -40_000, max: 70_000 }),
      fc.constantFrom(-0, 2 ** 31, -(2 ** 31) - 1, 2 ** 32, 2 ** 53, -(2 ** 53), 0.1),
      fc.boolean(),
      fc.constant(null),
      text,
      fc.string({ unit: fc.constantFrom(...'abc '), minLength: 20, maxLength: 300 }),
    );
    const { value } = fc.letrec<{ value: unknown }>((tie) => ({
      value: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc.oneof({ weight: 6, arbitrary: fc.array(tie('value'), { maxLength: 4 }) }, fc.array(tie('value'), { minLength: 15, maxLength: 17 })),
        fc
          .oneof({ weight: 6, arbitrary: fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, maxLength: 4 }) }, fc.uniqueArray(fc.tuple(key, tie('value')), { selector: ([k]) => k, minLength: 15, maxLength: 17 }))
          .map((m) => Object.fromEntries(m)),
      ),
    }));
    const field = fc.constantFrom('rec', 'pos', 'fw', 'ok');
    const tags = fc.dictionary(fc.constantFrom('host', 'dc', 'k'), fc.oneof({ weight: 20, arbitrary: fc.constantFrom('h1', 'h2', 'a') }, fc.constant('')), { maxKeys: 3 });
    const entry = fc
      .tuple(fc.constantFrom('m', 'n'), tags, fc.integer({ min: 1, max: 3 }), fc.uniqueArray(field, { minLength: 1, maxLength: 3 }))
      .chain(([metric, t, n, names]) =>
        fc.tuple(fc.constant(metric), fc.constant(t), fc.array(fc.integer({ min: 0, max: now + 2000 }), { minLength: n, maxLength: n }), fc.constant(names), fc.array(fc.array(value, { minLength: n, maxLength: n }), { minLength: names.length, maxLength: names.length })),
      )
      .map(([metric, t, ts, names, cols]) => ({ metric, tags: t, ts, fields: Object.fromEntries(names.map((f, c) => [f, cols[c]!])) }));
    // The SDK's encoder, and others a client might use: float32 for every fraction, 64-bit integers for large ones.
    const float32 = new Packr({ useRecords: false, useFloat32: 1 });
    const int64 = new Packr({ useRecords: false, largeBigIntToFloat: false, int64AsType: 'number' });
    const bodies = fc.tuple(fc.array(entry, { minLength: 1, maxLength: 3 }), fc.constantFrom(sdk, float32, int64)).map(([series, p]) => new Uint8Array(p.pack({ series })));
    const mutated = fc.tuple(bodies, fc.nat(), fc.integer({ min: 0, max: 255 }), fc.constantFrom('replace', 'insert', 'cut')).map(([b, at, c, how]) => {
      const i = at % b.length;
      if (how === 'cut') return b.subarray(0, i);
      const out = Buffer.from(how === 'insert' ? Buffer.concat([b.subarray(0, i), Buffer.of(c), b.subarray(i)]) : b);
      if (how === 'replace') out[i] = c;
      return new Uint8Array(out);
    });
    let taken = 0;
    let nested = 0;
    let refused = 0;
    fc.assert(
      fc.property(fc.oneof({ weight: 3, arbitrary: bodies }, mutated), (b) => {
        const r = bothWays(b, deep);
        if (!r) return;
        taken++;
        if ('error' in (r.general as object)) refused++;
        if (scanMp(b)!.entries.some((e) => Object.values(e.fields).some((col) => col.some((v) => v instanceof PackedValue)))) nested++;
        expect(r.scanned).toEqual(r.general);
        if (r.bytesOk) expect(r.bytesOk.scanned).toEqual(r.bytesOk.general);
      }),
      { numRuns: 4_000 },
    );
    expect(taken).toBeGreaterThan(1_000);
    expect(nested).toBeGreaterThan(500);
    expect(refused).toBeGreaterThan(20);
  }, 120_000);
});
