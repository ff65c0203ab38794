import fc from 'fast-check';
import { Command } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { EncodedCommand } from './bulk-script.js';

describe('EncodedCommand', () => {
  it('writes the bytes ioredis writes for the same command', () => {
    const arg = fc.oneof(fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)), fc.integer(), fc.double({ noNaN: true }));
    fc.assert(
      fc.property(fc.constantFrom('evalsha', 'eval', 'append'), fc.array(arg, { maxLength: 40 }), (name, args) => {
        // ioredis writes a command with no Buffer argument as a string: compare its bytes.
        const theirs = new Command(name, args).toWritable(undefined as never);
        const ours = new EncodedCommand(name, args).toWritable();
        expect(ours.equals(Buffer.isBuffer(theirs) ? theirs : Buffer.from(theirs))).toBe(true);
      }),
    );
  });
});
