import { describe, expect, it } from 'vitest';
import { ByteBudgetCache, FrequencyAdmissionCache } from './cache.js';

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
});
