import { describe, expect, it } from 'vitest';
import { ByteBudgetCache } from './cache.js';

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
