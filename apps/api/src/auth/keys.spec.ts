import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyRing, RateLimiter, hashKey } from './keys.js';

function keysFile(content: unknown): string {
  const file = join(mkdtempSync(join(tmpdir(), 's4-keys-')), 'keys.json');
  writeFileSync(file, JSON.stringify(content));
  return file;
}

describe('KeyRing', () => {
  it('finds keys by their secret, kept only as hashes, with their scopes and namespaces', () => {
    const ring = KeyRing.load(['plain-secret-0123456789'], keysFile([{ id: 'reader', sha256: hashKey('reader-secret-0123'), scopes: ['read'], namespaces: ['default'] }]));
    expect(ring.find('plain-secret-0123456789')?.scopes).toEqual(new Set(['read', 'write', 'admin']));
    const reader = ring.find('reader-secret-0123')!;
    expect(reader.id).toBe('reader');
    expect([...reader.scopes]).toEqual(['read']);
    expect([...reader.namespaces]).toEqual(['default']);
    expect(ring.find('reader-secret-012')).toBeUndefined();
    expect(ring.find(hashKey('reader-secret-0123'))).toBeUndefined(); // the stored hash is not itself a key
  });

  it('refuses a keys file with a clear message naming the problem', () => {
    expect(() => KeyRing.load([], keysFile([{ id: 'a', sha256: 'nothex', scopes: ['read'] }]))).toThrow(/\[0\.sha256\].*64 lowercase hex/);
    expect(() => KeyRing.load([], keysFile([{ id: 'a', sha256: hashKey('x'), scopes: ['root'] }]))).toThrow(/\[0\.scopes\.0\]/);
    expect(() => KeyRing.load([], keysFile([{ id: 'a', sha256: hashKey('x'), scopes: ['read'] }, { id: 'a', sha256: hashKey('y'), scopes: ['read'] }]))).toThrow(/used twice/);
    expect(() => KeyRing.load([], '/nonexistent/keys.json')).toThrow(/cannot be read/);
  });
});

describe('RateLimiter', () => {
  it('lets a burst of twice the rate through, then answers how long to wait', () => {
    let now = 0;
    const limiter = new RateLimiter(() => now);
    const key = { id: 'k', scopes: new Set(['read'] as const), namespaces: new Set(['*']), ratePerSecond: 2 };
    const waits = Array.from({ length: 5 }, () => limiter.take(key));
    expect(waits).toEqual([0, 0, 0, 0, 1]);
    now += 500; // one token back
    expect(limiter.take(key)).toBe(0);
    expect(limiter.take(key)).toBe(1);
    expect(limiter.take({ ...key, ratePerSecond: undefined })).toBe(0);
  });
});
