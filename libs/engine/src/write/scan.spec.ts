import { describe, expect, it } from 'vitest';
import { LimitError, ValidationError } from '@s4/core';
import { runSteps } from '../concurrency.js';
import { distinctSeries, scanSeriesSteps, sizeSeriesCaches } from './scan.js';
import { parseWrite, type SeriesWrite, type WriteLimits } from './validate.js';

const limits: WriteLimits = { maxSamplesPerRequest: 100, maxFieldsPerSample: 3, maxTags: 2, maxTagLength: 8, maxFutureMs: 1000, maxNestingDepth: 4 };
const now = 1_000_000;
const scan = (text: string) => runSteps(scanSeriesSteps(Buffer.from(text)));

const outcome = (f: () => SeriesWrite[]) => {
  try {
    // A scanned entry is its own SeriesWrite (with the scanner's members besides): compared as one.
    return { ok: f().map(({ id, key, ts, fields }) => ({ id, key, ts, fields })) };
  } catch (e) {
    return { error: e instanceof ValidationError ? e.issues : e instanceof LimitError ? (e as Error).message : e };
  }
};

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
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":["x"]}}]}', // a string value
      '{"series":[{"metric":"m","ts":[1],"fields":{"v":[null]}}]}',
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
