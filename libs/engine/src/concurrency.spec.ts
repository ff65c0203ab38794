import { describe, expect, it } from 'vitest';
import { Slices, runStepsSliced } from './concurrency.js';

/** Steps that each hold the thread `ms`, recording when they ran. */
function* busy(name: string, steps: number, ms: number, log: string[]): Generator<void, void> {
  for (let i = 0; i < steps; i++) {
    const until = performance.now() + ms;
    while (performance.now() < until);
    log.push(name);
    if (i < steps - 1) yield;
  }
}

describe('runStepsSliced', () => {
  it('gives the event loop a turn once a slice has run, not before', async () => {
    const log: string[] = [];
    setImmediate(() => log.push('turn'));
    await runStepsSliced(busy('a', 3, 1, log), 50);
    expect(log).toEqual(['a', 'a', 'a']);
    const later: string[] = [];
    setImmediate(() => later.push('turn'));
    await runStepsSliced(busy('b', 3, 6, later), 5);
    expect(later.indexOf('turn')).toBeGreaterThan(0);
    expect(later.indexOf('turn')).toBeLessThan(later.length - 1);
  });

  it('keeps one clock across the stages given the same Slices: a turn is due across a stage end', async () => {
    const log: string[] = [];
    const slices = new Slices(5);
    // Stage 1 runs 6 ms in its one step and ends without a turn (nothing comes after its step).
    await runStepsSliced(busy('first', 1, 6, log), slices);
    setImmediate(() => log.push('turn'));
    // Stage 2: the turn is due after its first step, as it would be in the middle of one stage.
    await runStepsSliced(busy('second', 2, 0, log), slices);
    expect(log).toEqual(['first', 'second', 'turn', 'second']);

    // With a clock of its own, the second stage runs through (the stall this shared clock ends).
    const apart: string[] = [];
    await runStepsSliced(busy('first', 1, 6, apart), 5);
    setImmediate(() => apart.push('turn'));
    await runStepsSliced(busy('second', 2, 0, apart), 5);
    expect(apart).toEqual(['first', 'second', 'second']);
  });
});
