import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeferredNumbers, readJsonNumber } from './json-values.js';

/** What readJsonNumber makes of a text: its value when it reads it itself, else the value DeferredNumbers gives. */
function read(text: string): { value: number; exact: boolean } {
  const bytes = Buffer.from(text);
  const n = readJsonNumber(bytes, 0);
  if (n === null || n.end !== bytes.length) throw new Error(`not read: ${text}`);
  if (n.exact) return { value: n.value, exact: true };
  const later = new DeferredNumbers();
  later.add(bytes, n.start, n.end);
  return { value: later.values()[0]!, exact: false };
}

const digits = (min: number, max: number) => fc.string({ unit: fc.constantFrom(...'0123456789'), minLength: min, maxLength: max });

describe('readJsonNumber', () => {
  it('reads every number as JSON.parse does, itself or through DeferredNumbers', () => {
    const text = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.float({ noNaN: true, noDefaultInfinity: true }).map((f) => JSON.stringify(f)),
      // 15 to 19 digits with the point anywhere: the 2^53 edge and the one-digit-more reading.
      fc
        .tuple(fc.boolean(), fc.constantFrom(...'123456789'), digits(14, 18), fc.nat(19))
        .map(([neg, first, rest, at]) => {
          const all = first + rest;
          const cut = at % all.length;
          return `${neg ? '-' : ''}${cut === 0 ? all : `${all.slice(0, cut)}.${all.slice(cut)}`}`;
        }),
      fc.tuple(digits(1, 3), digits(1, 24)).map(([a, b]) => `${a.replace(/^0+(?=\d)/, '')}.${b}`),
    );
    let own = 0;
    fc.assert(
      fc.property(text, (t) => {
        const r = read(t);
        if (r.exact) own++;
        expect(Object.is(r.value, JSON.parse(t)), `${t}: ${r.value} against ${JSON.parse(t)}`).toBe(true);
      }),
      { numRuns: 100_000 },
    );
    // Most are read without JSON.parse (the point of the 2^53 and one-digit-more paths).
    expect(own).toBeGreaterThan(40_000);
  });

  it('leaves a quotient on a midpoint between two doubles to JSON.parse, and reads its neighbours itself', () => {
    // 2^53 + 1 is halfway between 2^53 and 2^53 + 2 (JSON.parse rounds to even: 2^53); 2^54 + 2 between 2^54 and 2^54 + 4.
    for (const t of ['9007199254740993', '18014398509481986']) {
      expect(read(t).exact, t).toBe(false);
      expect(read(t).value).toBe(JSON.parse(t));
    }
    for (const t of ['9007199254740992', '9007199254740994', '9007199254740996', '18014398509481987', '900719925474099.3', '26.600000381469727', '0.062038324773311615']) {
      expect(read(t).exact, t).toBe(true);
      expect(read(t).value).toBe(JSON.parse(t));
    }
  });
});
