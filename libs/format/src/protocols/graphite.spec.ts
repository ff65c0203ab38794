import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Sample } from '@s4/core';
import { formatGraphiteLine, graphiteGlob, parseGraphiteLine } from './graphite.js';

const plain = (r: Sample | string) => (typeof r === 'string' ? r : { ...r, tags: { ...r.tags } });

describe('Graphite plaintext lines', () => {
  it('reads plain and tagged lines, fractional seconds, -1 and missing timestamps as now', () => {
    expect(plain(parseGraphiteLine('servers.a.cpu 0.5 1700000000', 7))).toEqual({ metric: 'servers.a.cpu', tags: {}, ts: 1_700_000_000_000, fields: { value: 0.5 } });
    expect(plain(parseGraphiteLine('disk.used;host=a;dc=eu 12 1700000000.25\r', 7))).toEqual({ metric: 'disk.used', tags: { host: 'a', dc: 'eu' }, ts: 1_700_000_000_250, fields: { value: 12 } });
    expect(plain(parseGraphiteLine('m -1e3 -1', 7))).toMatchObject({ ts: 7, fields: { value: -1000 } });
    expect(plain(parseGraphiteLine('m 1', 7))).toMatchObject({ ts: 7 });
    expect(plain(parseGraphiteLine('m\tinf\t5', 7))).toMatchObject({ ts: 5000, fields: { value: Infinity } });
  });

  it('names what is wrong with a bad line', () => {
    expect(parseGraphiteLine('m', 0)).toBe('expected "path value timestamp"');
    expect(parseGraphiteLine('m x 1', 0)).toBe('value "x" is not a number');
    expect(parseGraphiteLine('m 1 yesterday', 0)).toBe('timestamp "yesterday" is not Unix seconds');
    expect(parseGraphiteLine('m;k 1 1', 0)).toBe('tag "k" is not name=value');
    expect(parseGraphiteLine('m;k= 1 1', 0)).toMatch(/empty value/);
    expect(parseGraphiteLine('m;k=a;k=b 1 1', 0)).toBe('tag "k" appears twice');
    expect(parseGraphiteLine(';k=v 1 1', 0)).toBe('empty metric path');
  });

  it('format then parse is the identity', () => {
    const name = fc.stringMatching(/^[A-Za-z0-9_.:-]{1,20}$/);
    const sample = fc.record({
      metric: name,
      tags: fc.dictionary(fc.stringMatching(/^[A-Za-z0-9_.:-]{1,10}$/), fc.stringMatching(/^[A-Za-z0-9_.:=!^-]{1,10}$/), { maxKeys: 4 }),
      ts: fc.integer({ min: 0, max: 4_102_444_800_000 }),
      fields: fc.record({ value: fc.double({ noNaN: true }).map((v) => (Object.is(v, -0) ? 0 : v)) }),
    });
    fc.assert(
      fc.property(sample, (s) => {
        expect(plain(parseGraphiteLine(formatGraphiteLine(s), 0))).toEqual(s);
      }),
      { numRuns: 300 },
    );
  });

  it('globs as Graphite does: * and ? stay within a node', () => {
    expect(graphiteGlob('servers.*.cpu').test('servers.a.cpu')).toBe(true);
    expect(graphiteGlob('servers.*.cpu').test('servers.a.b.cpu')).toBe(false);
    expect(graphiteGlob('a.{b,c*}.d').test('a.cx.d')).toBe(true);
    expect(graphiteGlob('a.{b,c}.d').test('a.e.d')).toBe(false);
    expect(graphiteGlob('x.[0-9]').test('x.7')).toBe(true);
    expect(graphiteGlob('x?y').test('x.y')).toBe(false);
    expect(graphiteGlob('a.b').test('aXb')).toBe(false);
  });
});
