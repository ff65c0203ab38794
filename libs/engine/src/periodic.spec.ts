import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PeriodicWorker } from './periodic.js';

describe('PeriodicWorker', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('runs the next pass after the interval, or after soonMs when a pass reports a backlog', async () => {
    const backlog = [true, true, false, false];
    const at: number[] = [];
    const worker = new PeriodicWorker(10_000, async () => {
      at.push(Date.now());
      return backlog.shift() ?? false;
    }, () => undefined, 1_000);
    const t0 = Date.now();
    worker.start();
    await vi.advanceTimersByTimeAsync(10_000 + 1_000 + 1_000 + 10_000 + 10_000);
    await worker.stop();
    expect(at.map((t) => t - t0)).toEqual([10_000, 11_000, 12_000, 22_000, 32_000]);
  });

  it('keeps the interval after a failed pass', async () => {
    const at: number[] = [];
    const errors: unknown[] = [];
    const worker = new PeriodicWorker(5_000, async () => {
      at.push(Date.now());
      throw new Error('boom');
    }, (e) => errors.push(e), 100);
    const t0 = Date.now();
    worker.start();
    await vi.advanceTimersByTimeAsync(10_000);
    await worker.stop();
    expect(at.map((t) => t - t0)).toEqual([5_000, 10_000]);
    expect(errors).toHaveLength(2);
  });
});
