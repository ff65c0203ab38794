import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { tagsMatch } from '@s4/core';
import type { FooterEntry } from '@s4/format';
import { candidates } from './footer-index.js';

const name = fc.constantFrom('a', 'b', 'c', 'constructor', '');
const entry = (i: number): fc.Arbitrary<FooterEntry> =>
  fc.record({ metric: name, tags: fc.dictionary(name, name, { maxKeys: 3 }) }).map(({ metric, tags }) => ({
    id: String(i).padStart(16, '0'),
    metric,
    tags,
    offset: i * 100,
    length: 100,
    count: 1,
    minTs: 0,
    maxTs: 0,
    fields: ['value'],
  }));
const footer = fc
  .integer({ min: 0, max: 30 })
  .chain((n) => fc.tuple(...Array.from({ length: n }, (_, i) => entry(i))))
  .map((series) => ({ series }));
const selector = fc.record({ metric: name, tags: fc.dictionary(name, name, { maxKeys: 2 }) });

describe('footer candidate index', () => {
  it('never misses a matching series; every candidate shares the metric or a tag pair with the selector', () => {
    fc.assert(
      fc.property(footer, selector, (f, sel) => {
        const got = candidates(f, sel);
        const matches = f.series.filter((s) => s.metric === sel.metric && tagsMatch(s.tags, sel.tags));
        for (const m of matches) expect(got).toContain(m);
        for (const c of got) expect(c.metric === sel.metric || Object.entries(sel.tags).some(([k, v]) => Object.hasOwn(c.tags, k) && c.tags[k] === v)).toBe(true);
      }),
    );
  });

  it('offers the shortest list: a rare tag pair beats a common metric', () => {
    const series = Array.from({ length: 10 }, (_, i) => ({ id: String(i), metric: 'm', tags: { host: `h${i}` }, offset: i, length: 1, count: 1, minTs: 0, maxTs: 0, fields: [] }));
    const f = { series };
    expect(candidates(f, { metric: 'm', tags: { host: 'h3' } })).toEqual([series[3]]);
    expect(candidates(f, { metric: 'm', tags: {} })).toHaveLength(10);
    expect(candidates(f, { metric: 'other', tags: {} })).toEqual([]);
  });
});
