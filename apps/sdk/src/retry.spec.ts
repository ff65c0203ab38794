import { describe, expect, it } from 'vitest';
import { backoffDelay, retryPolicy } from './retry.js';

describe('backoffDelay', () => {
  const policy = retryPolicy({ minDelayMs: 100, maxDelayMs: 1000 });

  it('uses full jitter over an exponentially growing, capped window', () => {
    expect([0, 1, 2, 3, 4, 10].map((n) => backoffDelay(n, policy, undefined, () => 0.999999))).toEqual([0, 1, 2, 3, 4, 10].map((n) => Math.min(1000, 100 * 2 ** n) * 0.999999));
    expect(backoffDelay(3, policy, undefined, () => 0)).toBe(0);
  });

  it('waits at least Retry-After, capped at maxDelayMs', () => {
    expect(backoffDelay(0, policy, 500, () => 0)).toBe(500);
    expect(backoffDelay(0, policy, 60_000, () => 0)).toBe(1000);
  });

  it('retry: false means no retries', () => {
    expect(retryPolicy(false).retries).toBe(0);
  });
});
