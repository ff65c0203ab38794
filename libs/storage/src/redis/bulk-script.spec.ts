import fc from 'fast-check';
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RespArgs } from './bulk-script.js';

type Arg = string | number | Buffer;

function written(name: string, head: Arg[], args: Arg[], sizeHint: number): Buffer {
  const out = new RespArgs(sizeHint);
  for (const a of args) {
    if (typeof a === 'string') out.text(a);
    else if (typeof a === 'number') out.number(a);
    else out.bytes(a);
  }
  return out.command(name, head as (string | number)[]);
}

describe('RespArgs', () => {
  it('writes the bytes ioredis writes for the same command, whatever the size guess', () => {
    const arg = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)),
      fc.integer(),
      fc.maxSafeNat(),
      fc.double({ noNaN: true }),
      // Repeated (an append's window), ASCII and not, short and long: every path of the writer.
      fc.constantFrom(1764410400000, 0, 7),
      fc.string({ unit: 'grapheme', maxLength: 300 }),
      fc.string({ maxLength: 600 }),
    );
    const head = fc.tuple(fc.oneof(fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: 40, maxLength: 40 }), fc.string({ unit: 'binary', maxLength: 2000 })), fc.constant(1), fc.string({ unit: 'binary', maxLength: 40 }));
    fc.assert(
      fc.property(fc.constantFrom('evalsha', 'eval', 'append'), head, fc.array(arg, { maxLength: 60 }), fc.nat({ max: 5000 }), (name, h, args, hint) => {
        // ioredis writes a command with no Buffer argument as a string: compare its bytes.
        const theirs = new Command(name, [...h, ...args]).toWritable(undefined as never);
        const ours = written(name, h, args, hint);
        expect(ours.equals(Buffer.isBuffer(theirs) ? theirs : Buffer.from(theirs))).toBe(true);
      }),
    );
  });

  it('grows its buffer wherever an argument lands, a repeated number included', () => {
    const arg = fc.oneof(fc.constant(1764410400000), fc.constant(3600000), fc.string({ maxLength: 20 }), fc.uint8Array({ maxLength: 20 }).map((a) => Buffer.from(a)));
    fc.assert(
      fc.property(fc.array(arg, { minLength: 50, maxLength: 400 }), fc.nat({ max: 64 }), (args, hint) => {
        const theirs = new Command('evalsha', ['0'.repeat(40), 1, 'k', ...args]).toWritable(undefined as never);
        const ours = written('evalsha', ['0'.repeat(40), 1, 'k'], args, hint);
        expect(ours.equals(Buffer.isBuffer(theirs) ? theirs : Buffer.from(theirs))).toBe(true);
      }),
    );
  });

  it('makes the command again with another head, the arguments unchanged (EVAL after NOSCRIPT)', () => {
    const out = new RespArgs(8);
    out.number(2);
    out.text('h\u00e9');
    out.bytes(Buffer.from([0, 13, 10, 255]));
    const args = [2, 'h\u00e9', Buffer.from([0, 13, 10, 255])];
    const first = Buffer.from(out.command('evalsha', ['a'.repeat(40), 1, 'k']));
    const lua = 'return 1 -- '.padEnd(600, 'x');
    const second = out.command('eval', [lua, 1, 'k']);
    const expected = (name: string, h: Arg[]) => {
      const w = new Command(name, [...h, ...args]).toWritable(undefined as never);
      return Buffer.isBuffer(w) ? w : Buffer.from(w);
    };
    expect(first.equals(expected('evalsha', ['a'.repeat(40), 1, 'k']))).toBe(true);
    expect(second.equals(expected('eval', [lua, 1, 'k']))).toBe(true);
  });
});
