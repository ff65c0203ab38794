import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError, type HotAppend } from '@s4/core';
import { INGEST_MESSAGE_VERSION, decodeIngestMessage, encodeIngestMessage } from './message.js';

// Strings that survive UTF-8 (a lone surrogate would come back as U+FFFD, see wal.spec.ts).
const text = fc.string({ maxLength: 16 }).map((s) => Buffer.from(s, 'utf8').toString('utf8'));
const append: fc.Arbitrary<HotAppend> = fc.record({
  ref: fc.record({ ns: text, shard: fc.nat({ max: 4095 }) }),
  window: fc.nat({ max: 2 ** 45 }).map((h) => h * 3_600_000),
  id: text,
  key: fc.record({ metric: text, tags: fc.dictionary(text, text, { maxKeys: 4 }) }),
  data: fc.uint8Array({ maxLength: 300 }),
});

describe('ingest-log message', () => {
  it('round-trips any appends exactly, in order', () => {
    fc.assert(
      fc.property(fc.array(append, { maxLength: 12 }), (appends) => {
        const back = decodeIngestMessage(encodeIngestMessage(appends), INGEST_MESSAGE_VERSION);
        expect(back).toEqual(appends);
      }),
    );
  });

  it('keeps a tag named __proto__ as a tag, not as a prototype', () => {
    const key = JSON.parse('{"metric":"m","tags":{"__proto__":"x"}}') as HotAppend['key'];
    const [back] = decodeIngestMessage(encodeIngestMessage([{ ref: { ns: 'n', shard: 1 }, window: 0, id: 'a', key, data: new Uint8Array([1]) }]), '1');
    expect(Object.keys(back!.key.tags)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(back!.key.tags)).toBe(Object.prototype);
  });

  it('refuses a torn value, a flipped byte and an unknown version as corrupt', () => {
    fc.assert(
      fc.property(fc.array(append, { minLength: 1, maxLength: 4 }), fc.nat(), (appends, at) => {
        const bytes = encodeIngestMessage(appends);
        expect(() => decodeIngestMessage(bytes.subarray(0, bytes.length - 1), '1')).toThrow(CorruptDataError);
        const flipped = Buffer.from(bytes);
        const i = 8 + (at % (flipped.length - 8));
        flipped[i]! ^= 0x40;
        expect(() => decodeIngestMessage(flipped, '1')).toThrow(CorruptDataError);
      }),
    );
    expect(() => decodeIngestMessage(Buffer.alloc(0), '2')).toThrow(/format version "2"/);
    expect(() => decodeIngestMessage(Buffer.alloc(0), undefined)).toThrow(CorruptDataError);
  });
});
