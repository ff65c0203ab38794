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

describe('bulkTurn, several pieces of bulk work', () => {
  /** Turns of the event loop counted by a chain of immediates (each runs in the next iteration). */
  const turnCounter = () => {
    let n = 0;
    let on = true;
    const tick = () => {
      n++;
      if (on) setImmediate(tick);
    };
    setImmediate(tick);
    return { now: () => n, stop: () => (on = false) };
  };

  it('lets one piece go on per turn of the event loop, in the order they asked', async () => {
    const turns = turnCounter();
    const seen: [string, number][] = [];
    await Promise.all(['a', 'b', 'c'].map((name) => bulkTurn().then(() => seen.push([name, turns.now()]))));
    turns.stop();
    expect(seen.map(([name]) => name)).toEqual(['a', 'b', 'c']);
    // Each in a turn of its own: with an immediate each, all three went on in the same check phase.
    expect(new Set(seen.map(([, turn]) => turn)).size).toBe(3);
  });

  it('lets the event loop run its other phases between two pieces', async () => {
    const order: string[] = [];
    const a = bulkTurn().then(() => {
      order.push('a');
      // Due while piece a runs, as a request that arrives meanwhile (timers and I/O come before the check phase).
      setTimeout(() => order.push('io'), 0);
      const until = performance.now() + 3;
      while (performance.now() < until);
    });
    const b = bulkTurn().then(() => order.push('b'));
    await Promise.all([a, b]);
    expect(order).toEqual(['a', 'io', 'b']);
  });

  it('takes the pieces woken by the end of an urgent request one turn at a time', async () => {
    const done = urgentWork();
    const turns = turnCounter();
    const seen: number[] = [];
    const all = Promise.all([0, 1, 2].map(() => bulkTurn().then(() => seen.push(turns.now()))));
    await sleep(5);
    expect(seen).toEqual([]);
    done();
    await all;
    turns.stop();
    expect(new Set(seen).size).toBe(3);
  });
});
