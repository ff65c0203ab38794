import { describe, expect, it } from 'vitest';
import { ByteBudgetCache, chargeMemo, FrequencyAdmissionCache } from './cache.js';

describe('ByteBudgetCache', () => {
  it('evicts the least recently used entries to stay within its byte budget', () => {
    const c = new ByteBudgetCache<string>(10);
    c.set('a', 'A', 4);
    c.set('b', 'B', 4);
    expect(c.get('a')).toBe('A'); // a is now the most recently used
    c.set('c', 'C', 4);
    expect(c.get('b')).toBeUndefined();
    expect(c.get('a')).toBe('A');
    expect(c.get('c')).toBe('C');
    expect(c.bytes).toBe(8);
  });

  it('refuses a value larger than the whole budget and replaces a key in place', () => {
    const c = new ByteBudgetCache<string>(10);
    c.set('big', 'X', 11);
    expect(c.get('big')).toBeUndefined();
    c.set('k', 'v1', 6);
    c.set('k', 'v2', 3);
    expect(c.get('k')).toBe('v2');
    expect(c.bytes).toBe(3);
  });
});

describe('FrequencyAdmissionCache', () => {
  /** One pass over keys 0..n-1: get, and set on a miss (as the raw reader does). */
  const pass = (c: FrequencyAdmissionCache<number>, n: number, bytes = 1) => {
    let hits = 0;
    for (let k = 0; k < n; k++) {
      if (c.get(`k${k}`) !== undefined) hits++;
      else c.set(`k${k}`, k, bytes);
    }
    return hits;
  };

  it('keeps most of a repeated scan larger than its budget (LRU would keep none of it)', () => {
    const c = new FrequencyAdmissionCache<number>(90);
    const lru = new ByteBudgetCache<number>(90);
    expect(pass(c, 100)).toBe(0);
    for (let round = 0; round < 5; round++) {
      expect(pass(c, 100)).toBe(90);
      let lruHits = 0;
      for (let k = 0; k < 100; k++) {
        if (lru.get(`k${k}`) !== undefined) lruHits++;
        else lru.set(`k${k}`, k, 1);
      }
      expect(lruHits).toBe(0);
    }
    expect(c.bytes).toBe(90);
  });

  it('lets a working set asked for more often displace an old one', () => {
    const c = new FrequencyAdmissionCache<number>(10, 4);
    for (let k = 0; k < 10; k++) c.set(`old${k}`, k, 1);
    for (let k = 0; k < 10; k++) c.get(`old${k}`);
    for (let round = 0; round < 6; round++)
      for (let k = 0; k < 10; k++) if (c.get(`new${k}`) === undefined) c.set(`new${k}`, k, 1);
    for (let k = 0; k < 10; k++) expect(c.get(`new${k}`)).toBe(k);
    expect(c.bytes).toBe(10);
  });

  it('admits while there is room, refuses what exceeds the budget, evicts to fit a larger entry', () => {
    const c = new FrequencyAdmissionCache<string>(10);
    c.set('big', 'X', 11);
    expect(c.get('big')).toBeUndefined();
    c.set('a', 'A', 4);
    c.set('b', 'B', 4);
    expect(c.get('a')).toBe('A');
    // 'c' asked for three times outranks 'b' (asked for once: its set did not count) and 'a' (once).
    for (let i = 0; i < 3; i++) c.get('c');
    c.set('c', 'C', 8);
    expect(c.get('c')).toBe('C');
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBeUndefined();
    expect(c.bytes).toBe(8);
  });

  it('uses only what a cache sharing its budget leaves, and gives room back when that one grows (trim)', () => {
    const other = new ByteBudgetCache<string>(4);
    const c = new FrequencyAdmissionCache<number>(10, 10, () => other.bytes);
    for (let k = 0; k < 10; k++) c.set(`k${k}`, k, 1);
    expect(c.bytes).toBe(10);
    other.set('f', 'F', 3);
    c.trim();
    expect(c.bytes).toBe(7);
    // the least recently used went first
    expect(c.get('k0')).toBeUndefined();
    expect(c.get('k2')).toBeUndefined();
    expect(c.get('k3')).toBe(3);
    // a newcomer no more popular than the entries is refused while the other cache holds its part
    c.set('n', 99, 1);
    expect(c.get('n')).toBeUndefined();
    expect(c.bytes + other.bytes).toBeLessThanOrEqual(10);
  });
});

describe('chargeMemo', () => {
  it('counts a memo derived from a cached value in that cache, evicting others to stay within the budget', () => {
    const c = new FrequencyAdmissionCache<{ id: string }>(100);
    const a = { id: 'a' };
    const b = { id: 'b' };
    c.set('a', a, 40);
    c.set('b', b, 40);
    expect(chargeMemo(b, 10)).toBe(true);
    expect(c.bytes).toBe(90);
    // b's memo grows past the budget: the least recently used other entry (a) goes, b stays.
    expect(chargeMemo(b, 30)).toBe(true);
    expect(c.get('a')).toBeUndefined();
    expect(c.get('b')).toBe(b);
    expect(c.bytes).toBe(80);
  });

  it('does not count a memo of a value that is not cached, or no longer is', () => {
    const c = new FrequencyAdmissionCache<{ id: string }>(100);
    expect(chargeMemo({ id: 'never' }, 10)).toBe(false);
    const a = { id: 'a' };
    c.set('a', a, 60);
    expect(chargeMemo(a, 20)).toBe(true);
    c.get('b');
    c.get('b');
    c.set('b', { id: 'b' }, 60); // asked for more often than a: a and its memo are evicted together
    expect(c.get('a')).toBeUndefined();
    expect(c.bytes).toBe(60);
    expect(chargeMemo(a, 20)).toBe(false);
    expect(c.bytes).toBe(60);
  });

  it('releases a replaced value and its memo', () => {
    const c = new FrequencyAdmissionCache<{ id: string }>(100);
    const old = { id: 'old' };
    c.set('k', old, 30);
    chargeMemo(old, 20);
    c.set('k', { id: 'new' }, 30);
    expect(c.bytes).toBe(30);
    expect(chargeMemo(old, 5)).toBe(false);
  });
});
