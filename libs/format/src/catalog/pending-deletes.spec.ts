import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodePendingDeletes, encodePendingDeletes, type PendingDelete } from './pending-deletes.js';

const dir = (name: string) => fileURLToPath(new URL(`../../testdata/${name}`, import.meta.url));

/** Regenerate only for a new version: S4_UPDATE_GOLDEN=1 npx vitest run --project unit libs/format/src/catalog */
const GOLDEN: PendingDelete[] = [
  { key: 'v1/golden/seg/0003/20251122T04Z/p000001-f0000000007.s4seg', deleteAfter: 1_763_788_200_000 },
  { key: 'v1/golden/seg/0003/20251122T04Z/p000002-f0000000007.s4seg', deleteAfter: 1_763_788_200_000 },
  { key: 'v1/golden/seg/0003/20251122T04Z/p000003-f0000000009.s4seg', deleteAfter: null },
];

const entry = fc.record({ key: fc.string({ minLength: 1, maxLength: 80 }), deleteAfter: fc.option(fc.integer({ min: 0, max: 2 ** 53 - 1 }), { nil: null }) });
const list = fc.uniqueArray(entry, { selector: (e) => e.key, maxLength: 30 });

describe('pending deletes list', () => {
  it('round-trips, sorted by key', () => {
    fc.assert(
      fc.property(list, (l) => {
        const sorted = [...l].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
        expect(decodePendingDeletes(encodePendingDeletes(l))).toEqual(sorted);
        expect(Buffer.from(encodePendingDeletes([...l].reverse())).equals(Buffer.from(encodePendingDeletes(l)))).toBe(true);
      }),
    );
  });

  it('is the JSON document catalog.md specifies', () => {
    expect(Buffer.from(encodePendingDeletes([{ key: 'b', deleteAfter: null }, { key: 'a', deleteAfter: 5 }])).toString('utf8')).toBe(
      '{"version":1,"pending":[{"key":"a","deleteAfter":5},{"key":"b","deleteAfter":null}]}',
    );
  });

  it('refuses a key twice, another version or shape', () => {
    expect(() => encodePendingDeletes([{ key: 'a', deleteAfter: 1 }, { key: 'a', deleteAfter: 2 }])).toThrow(/twice/);
    expect(() => decodePendingDeletes(Buffer.from('{"version":2,"pending":[]}'))).toThrow(/unknown version 2/);
    expect(() => decodePendingDeletes(Buffer.from('{"version":1,"pending":{}}'))).toThrow(/not an array/);
    expect(() => decodePendingDeletes(Buffer.from('{"version":1,"pending":[{"key":"a"}]}'))).toThrow(/entry 0/);
    expect(() => decodePendingDeletes(Buffer.from('{"version":1,"pending":[{"key":"a","deleteAfter":1.5}]}'))).toThrow(/safe integer/);
    expect(() => decodePendingDeletes(Buffer.from('[]'))).toThrow(/document/);
    expect(() => decodePendingDeletes(Buffer.from('{"version":1'))).toThrow(SyntaxError);
  });

  describe('golden pending-deletes-v1', () => {
    const bin = dir('pending-deletes-v1.deletes');
    const json = dir('pending-deletes-v1.json');
    it.runIf(process.env.S4_UPDATE_GOLDEN === '1')('regenerates', () => {
      writeFileSync(bin, encodePendingDeletes(GOLDEN));
      writeFileSync(json, `${JSON.stringify(decodePendingDeletes(encodePendingDeletes(GOLDEN)), null, 1)}\n`);
    });

    it('decodes the committed object to the committed JSON and re-encodes it byte for byte', () => {
      expect(existsSync(bin), `${bin} missing; run with S4_UPDATE_GOLDEN=1`).toBe(true);
      const committed = new Uint8Array(readFileSync(bin));
      expect(decodePendingDeletes(committed)).toEqual(JSON.parse(readFileSync(json, 'utf8')));
      expect(Buffer.from(encodePendingDeletes(JSON.parse(readFileSync(json, 'utf8')) as PendingDelete[])).equals(committed)).toBe(true);
      expect(Buffer.from(encodePendingDeletes(GOLDEN)).equals(committed)).toBe(true);
    });
  });
});
