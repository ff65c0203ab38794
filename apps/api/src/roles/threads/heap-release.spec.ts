import { getHeapStatistics } from 'node:v8';
import { describe, expect, it } from 'vitest';
import { HeapRelease } from './heap-release.js';

const committed = () => getHeapStatistics().total_heap_size;

/** Allocate ~100 MB of small objects and drop them: garbage that a pass leaves. */
function churn(): number {
  const objects: { i: number; s: string }[] = [];
  for (let i = 0; i < 1_500_000; i++) objects.push({ i, s: `v${i}` });
  return objects.length;
}

describe('HeapRelease', () => {
  it('shrinks the heap a heavy pass left behind', () => {
    const release = new HeapRelease();
    churn();
    const grown = committed();
    release.afterPass(1_000);
    // A plain collection leaves the pages committed (pooled); this one gives them back.
    expect(grown - committed()).toBeGreaterThan(50 * 2 ** 20);
  });

  it('leaves a light pass alone', () => {
    churn();
    const release = new HeapRelease(); // the thread became ready with this heap
    const before = committed();
    release.afterPass(1); // a 1 ms pass, and the heap has not grown since: nothing to give back
    expect(committed()).toBeGreaterThan(before - 8 * 2 ** 20);
  });
});
