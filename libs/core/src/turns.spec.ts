import { describe, expect, it } from 'vitest';
import { MAX_WAIT_MS, bulkTurn, urgentWork } from './turns.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('bulkTurn', () => {
  it('takes one turn when no request is urgent', async () => {
    const order: string[] = [];
    setImmediate(() => order.push('waiting callback'));
    const turn = bulkTurn().then(() => order.push('bulk'));
    setTimeout(() => order.push('timer'), 5);
    await Promise.resolve();
    expect(order).toEqual([]);
    await turn;
    expect(order).toEqual(['waiting callback', 'bulk']);
  });

  it('waits while an urgent request is in flight, and goes on when it ends', async () => {
    const done = urgentWork();
    const order: string[] = [];
    const turn = bulkTurn().then(() => order.push('bulk'));
    await sleep(10);
    expect(order).toEqual([]);
    order.push('urgent ends');
    done();
    await turn;
    expect(order).toEqual(['urgent ends', 'bulk']);
  });

  it('waits for every urgent request, not only the first to end', async () => {
    const a = urgentWork();
    const b = urgentWork();
    let ran = false;
    const turn = bulkTurn().then(() => (ran = true));
    await sleep(5);
    a();
    await sleep(5);
    expect(ran).toBe(false);
    b();
    await turn;
    expect(ran).toBe(true);
  });

  it('does not wait for ever on a request that never ends', async () => {
    const done = urgentWork();
    try {
      const started = performance.now();
      await bulkTurn();
      // Bounded by MAX_WAIT_MS (and URGENT_MS): bulk work moves on beside a long request.
      expect(performance.now() - started).toBeGreaterThanOrEqual(MAX_WAIT_MS - 2);
    } finally {
      done();
      done(); // a second call changes nothing
    }
    const order: string[] = [];
    setTimeout(() => order.push('timer'), 5);
    await bulkTurn().then(() => order.push('bulk'));
    expect(order).toEqual(['bulk']);
  });
});
