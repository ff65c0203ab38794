import { describe, expect, it } from 'vitest';
import { compileMatchers, matchersMatch, type TagMatcher } from './matchers.js';
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
