import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatchers, literalAlternatives, literalEnds, matchersMatch, type TagMatcher } from './matchers.js';
import { nameMap } from './model.js';

const SERIES: Record<string, string>[] = [
  { host: 'web-1', dc: 'eu' },
  { host: 'web-2', dc: 'us' },
  { host: 'db-1', dc: 'eu', role: 'primary' },
  { host: 'db-2' },
  {},
];
const match = (...ms: TagMatcher[]) => SERIES.map((t, i) => (matchersMatch(t, compileMatchers(ms)) ? i : -1)).filter((i) => i >= 0);

describe('tag matchers', () => {
  it('= and != compare values; a missing tag counts as ""', () => {
    expect(match({ key: 'dc', op: '=', value: 'eu' })).toEqual([0, 2]);
    expect(match({ key: 'dc', op: '!=', value: 'eu' })).toEqual([1, 3, 4]);
    expect(match({ key: 'dc', op: '=', value: '' })).toEqual([3, 4]);
    expect(match({ key: 'dc', op: '!=', value: '' })).toEqual([0, 1, 2]);
  });

  it('=~ and !~ are anchored at both ends', () => {
    expect(match({ key: 'host', op: '=~', value: 'web-.*' })).toEqual([0, 1]);
    expect(match({ key: 'host', op: '=~', value: 'web' })).toEqual([]);
    expect(match({ key: 'host', op: '=~', value: 'eb-1' })).toEqual([]);
    expect(match({ key: 'host', op: '!~', value: 'web-.*' })).toEqual([2, 3, 4]);
    expect(match({ key: 'host', op: '=~', value: 'web-1|db-2' })).toEqual([0, 3]);
  });

  it('a regex that accepts "" also selects series without the tag, and its negation drops them', () => {
    expect(match({ key: 'role', op: '=~', value: '.*' })).toEqual([0, 1, 2, 3, 4]);
    expect(match({ key: 'role', op: '=~', value: 'primary|' })).toEqual([0, 1, 2, 3, 4]);
    expect(match({ key: 'role', op: '=~', value: '.+' })).toEqual([2]);
    expect(match({ key: 'role', op: '!~', value: '.*' })).toEqual([]);
    expect(match({ key: 'role', op: '!~', value: '.+' })).toEqual([0, 1, 3, 4]);
  });

  it('every matcher must hold', () => {
    expect(match({ key: 'dc', op: '=', value: 'eu' }, { key: 'host', op: '!~', value: 'db-.*' })).toEqual([0]);
    expect(match()).toEqual([0, 1, 2, 3, 4]);
  });

  it('names are looked up as own properties only', () => {
    const tags = nameMap([['constructor', 'x']]);
    expect(matchersMatch({}, compileMatchers([{ key: 'constructor', op: '=', value: '' }]))).toBe(true);
    expect(matchersMatch({}, compileMatchers([{ key: 'toString', op: '=~', value: '.+' }]))).toBe(false);
    expect(matchersMatch(tags, compileMatchers([{ key: 'constructor', op: '=', value: 'x' }]))).toBe(true);
  });

  it('refuses an invalid or overlong regular expression, naming the matcher', () => {
    expect(() => compileMatchers([{ key: 'host', op: '=~', value: 'web-(' }])).toThrow(/host=~web-\(: not a valid regular expression/);
    expect(() => compileMatchers([{ key: 'host', op: '!~', value: 'a'.repeat(1025) }])).toThrow(/longer than 1024/);
  });
});

describe('literal parts of a regular expression', () => {
  it('names the values of plain alternatives, and nothing for other syntax', () => {
    expect(literalAlternatives('web-1|db\\.2')).toEqual(['web-1', 'db.2']);
    expect(literalAlternatives('a|')).toEqual(['a', '']);
    expect(literalAlternatives('')).toEqual(['']);
    expect(literalAlternatives('a.b')).toBeUndefined();
    expect(literalAlternatives('(a|b)')).toBeUndefined();
    expect(literalAlternatives('a\\d')).toBeUndefined();
  });

  it('finds the literal prefix and suffix every match has', () => {
    expect(literalEnds('host-[0-9]*00')).toEqual({ prefix: 'host-', suffix: '00' });
    expect(literalEnds('abc*')).toEqual({ prefix: 'ab', suffix: '' });
    expect(literalEnds('a\\d')).toEqual({ prefix: 'a', suffix: '' });
    expect(literalEnds('a|b.c')).toEqual({ prefix: '', suffix: '' });
    expect(literalEnds('(a|b)x')).toEqual({ prefix: '', suffix: 'x' });
    expect(literalEnds('[|]x')).toEqual({ prefix: '', suffix: 'x' });
  });

  // The shortcuts (literal sets, prefix and suffix checks) must accept exactly what the regex does.
  const piece = fc.constantFrom('a', 'b', '0', '-', 'x', '00', 'ab', '.', '.*', '.+', '*', '+', '?', '|', '(', ')', '(?:', '[0-9]', '[|]', '[a-b]', '\\.', '\\d', '\\-', '{2}', '{0,1}', '\\\\', 'a|b', '$', '^');
  const regex = fc.array(piece, { maxLength: 8 }).map((p) => p.join(''));
  const text = fc.array(fc.constantFrom('a', 'b', '0', '1', '-', 'x', '.', '|', '\\', '$'), { maxLength: 8 }).map((p) => p.join(''));

  it('accepts exactly the values the anchored regular expression accepts', () => {
    fc.assert(
      fc.property(regex, fc.array(text, { maxLength: 20 }), (source, values) => {
        let re: RegExp;
        try {
          re = new RegExp(`^(?:${source})$`, 'u');
        } catch {
          return; // invalid: compileMatchers refuses it (tested above)
        }
        const [m] = compileMatchers([{ key: 'k', op: '=~', value: source }]);
        for (const v of ['', ...values]) expect(m!.accepts(v), `${source} on ${JSON.stringify(v)}`).toBe(re.test(v));
        for (const v of ['', ...values]) if (re.test(v) && v !== '') expect(v.startsWith(m!.prefix), `${source} prefix ${m!.prefix}`).toBe(true);
        if (m!.literals) expect([...m!.literals].sort()).toEqual([...new Set(m!.literals)].sort());
        for (const v of m!.literals ?? []) expect(re.test(v), `${source} literal ${JSON.stringify(v)}`).toBe(true);
      }),
      { numRuns: 3000 },
    );
  });
});
