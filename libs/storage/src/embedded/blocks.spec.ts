import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { BLOCK_BYTES, BlockPool, NO_BLOCK, type BlockLog } from './blocks.js';

const read = (pool: BlockPool, log: BlockLog) => pool.read(log.head, log.start, log.length);

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
          for (let i = 0; i < logs.length; i++) expect([...read(pool, logs[i]!)]).toEqual(model[i]);
        }
      }),
      { numRuns: 200 },
    );
  });

  it('keeps a read taken before appends and releases: released blocks are never written again', () => {
    const pool = new BlockPool();
    const a = emptyLog();
    pool.append(a, Uint8Array.from({ length: 3 * BLOCK_BYTES }, (_, i) => i % 251));
    const taken = { ...a };
    pool.dropHead(a, BLOCK_BYTES + 5);
    pool.append(a, new Uint8Array(BLOCK_BYTES).fill(7));
    pool.clear(a);
    const b = emptyLog();
    pool.append(b, new Uint8Array(4 * BLOCK_BYTES).fill(9));
    expect([...read(pool, taken)]).toEqual(Array.from({ length: 3 * BLOCK_BYTES }, (_, i) => i % 251));
    expect([...read(pool, b)]).toEqual(new Array(4 * BLOCK_BYTES).fill(9));
  });

  it('is wasteful once released blocks are most of it, and enough of them', () => {
    const pool = new BlockPool();
    const logs = Array.from({ length: 5_000 }, emptyLog);
    for (const log of logs) pool.append(log, new Uint8Array(BLOCK_BYTES));
    for (const log of logs.slice(0, 2_400)) pool.clear(log);
    expect(pool.wasteful).toBe(false);
    for (const log of logs.slice(2_400, 4_200)) pool.clear(log);
    expect(pool.wasteful).toBe(true);
  });
});
