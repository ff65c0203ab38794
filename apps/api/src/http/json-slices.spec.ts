import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseWriteBodySlices } from './json-slices.js';

const run = (text: string, piece: number) => {
  const steps = parseWriteBodySlices(text, piece);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
};
const jsonOf = (text: string): { ok: unknown } | { error: true } => {
  try {
    return { ok: JSON.parse(text) as unknown };
  } catch {
    return { error: true };
  }
};

/** Write-body-like texts: entries with strings full of quotes, brackets, commas and escapes, spaced at random. */
const space = fc.constantFrom('', ' ', '\n', '\t ', '\r\n');
const entry = fc.jsonValue({ maxDepth: 3 }).map((v) => ({ metric: 'm', tags: { k: 'a"],{\\' }, ts: [1], fields: { v: [v] } }));
const body = fc
  .tuple(fc.subarray(['series', 'samples'], { minLength: 1 }), fc.array(entry, { maxLength: 12 }), fc.array(entry, { maxLength: 12 }), space, space)
  .map(([keys, a, b, s1, s2]) => `${s1}{${keys.map((k, i) => `${s2}"${k}"${s1}:${s2}[${s1}${(i ? b : a).map((e) => JSON.stringify(e)).join(`${s2},${s1}`)}${s2}]`).join(',')}${s1}}${s2}`);

describe('parseWriteBodySlices', () => {
  it('reads a write body exactly as JSON.parse does, whatever the piece size', () => {
    let sliced = 0;
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 200 }), (text, piece) => {
        const got = run(text, piece);
        if (got !== null) sliced++;
        expect(got ?? JSON.parse(text)).toEqual(JSON.parse(text));
      }),
      { numRuns: 2_000 },
    );
    // The shape it exists for is taken, not handed back.
    expect(sliced).toBe(2_000);
  });

  it('returns null, never a value, for whatever JSON.parse refuses or reads differently', () => {
    fc.assert(
      fc.property(body, fc.integer({ min: 1, max: 60 }), fc.nat(), fc.constantFrom('', ',', ']', '[', '}', '{', '"', '\\', ' ', ',]', '"series":[1],'), (text, piece, at, insert) => {
        const i = at % (text.length + 1);
        // Cut a character out and put something in its place.
        const bad = text.slice(0, i) + insert + text.slice(i + 1);
        const got = run(bad, piece);
        const whole = jsonOf(bad);
        if (got !== null) expect(whole).toEqual({ ok: got });
      }),
      { numRuns: 5_000 },
    );
    for (const t of ['{"series":[1,]}', '{"series":[,1]}', '{"series":[1],"series":[2]}', '{"seri\\u0065s":[1]}', '{"series":[1]} x', '{"other":[1]}', '[1]', '{"series":{}}', '{}'])
      expect(run(t, 1), t).toBeNull();
  });
});
