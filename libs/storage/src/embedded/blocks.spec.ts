import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOCK_BYTES, BlockPool, NO_BLOCK, type BlockLog } from './blocks.js';

const emptyLog = (): BlockLog => ({ head: NO_BLOCK, tail: NO_BLOCK, start: 0, length: 0 });

/** One step on one of a few logs of a pool: bytes appended, the first n released, or all of it. */
const step = fc.oneof(
  fc.record({ op: fc.constant('append' as const), log: fc.nat(4), bytes: fc.uint8Array({ maxLength: 3 * BLOCK_BYTES + 5 }) }),
  fc.record({ op: fc.constant('drop' as const), log: fc.nat(4), fraction: fc.double({ min: 0, max: 1, noNaN: true }) }),
  fc.record({ op: fc.constant('clear' as const), log: fc.nat(4) }),
);

describe('block pool', () => {
  it('keeps every log equal to its bytes appended less those released, whatever the interleaving', () => {
    fc.assert(
      fc.property(fc.array(step, { maxLength: 300 }), (steps) => {
        const pool = new BlockPool();
        const logs = Array.from({ length: 5 }, emptyLog);
        const model: number[][] = Array.from({ length: 5 }, () => []);
        for (const s of steps) {
          const log = logs[s.log]!;
          const want = model[s.log]!;
          if (s.op === 'append') {
            pool.append(log, s.bytes);
            want.push(...s.bytes);
          } else if (s.op === 'drop') {
            // The hot tier drops a head shorter than the log (a whole release clears it).
            const n = Math.floor(s.fraction * want.length);
            if (n >= want.length) continue;
            pool.dropHead(log, n);
            want.splice(0, n);
          } else {
            pool.clear(log);
            want.length = 0;
          }
          for (let i = 0; i < logs.length; i++) expect([...pool.read(logs[i]!)]).toEqual(model[i]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reuses released blocks before taking new ones', () => {
    const pool = new BlockPool();
    const a = emptyLog();
    pool.append(a, new Uint8Array(10 * BLOCK_BYTES).fill(1));
    const held = pool.bytes;
    pool.clear(a);
    const b = emptyLog();
    pool.append(b, new Uint8Array(10 * BLOCK_BYTES).fill(2));
    expect(pool.bytes).toBe(held);
    expect(pool.read(b)).toEqual(new Uint8Array(10 * BLOCK_BYTES).fill(2));
  });

  it('reads a copy: bytes read stay as they were after their blocks are released and reused', () => {
    const pool = new BlockPool();
    const a = emptyLog();
    pool.append(a, new Uint8Array([1, 2, 3]));
    const seen = pool.read(a);
    pool.clear(a);
    const b = emptyLog();
    pool.append(b, new Uint8Array([9, 9, 9]));
    expect([...seen]).toEqual([1, 2, 3]);
  });
});
