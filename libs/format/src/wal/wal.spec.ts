import { crc32 } from 'node:zlib';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CorruptDataError } from '@s4/core';
import { WAL_HEADER_BYTES, decodeWal, encodeHotAppends, encodeWalAppends, encodeWalRecord, walSeriesBytes, type WalRecord } from './wal.js';

// Strings are stored as UTF-8: a lone surrogate cannot be, so it reads back as U+FFFD.
const str = fc.string({ unit: 'binary', maxLength: 24 });
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8');
const u32 = fc.nat({ max: 0xffff_ffff });
const f64 = fc.double();

const append = fc.record({ ns: fc.oneof(str, fc.constantFrom('a', 'b')), shard: u32, window: f64, id: str, key: str, data: fc.uint8Array({ maxLength: 200 }) });
const record: fc.Arbitrary<WalRecord> = fc.oneof(
  append.map((a) => ({ type: 'append' as const, ...a })),
  fc.record({ type: fc.constant('appends' as const), entries: fc.array(append, { maxLength: 6 }) }),
  fc.record({ type: fc.constant('release' as const), ns: str, shard: u32, window: f64, id: str, length: f64 }),
  fc.record({ type: fc.constant('releases' as const), ns: str, shard: u32, window: f64, cursors: fc.array(fc.record({ id: str, length: f64 }), { maxLength: 6 }) }),
  fc.record({ type: fc.constant('generation' as const), ns: str, shard: u32, value: f64 }),
  fc.record({ type: fc.constant('fence' as const), ns: str, shard: u32, value: f64 }),
);

const normalized = (r: WalRecord): WalRecord => {
  if (r.type === 'appends') return { type: 'appends', entries: r.entries.map((e) => ({ ...e, ns: wellFormed(e.ns), id: wellFormed(e.id), key: wellFormed(e.key) })) };
  if (r.type === 'releases') return { ...r, ns: wellFormed(r.ns), cursors: r.cursors.map((c) => ({ ...c, id: wellFormed(c.id) })) };
  const out = { ...r, ns: wellFormed(r.ns) };
  if ('id' in out) out.id = wellFormed(out.id);
  if ('key' in out) out.key = wellFormed(out.key);
  return out;
};

describe('embedded hot-tier log (WAL)', () => {
  it('round-trips every record type exactly', () => {
    fc.assert(
      fc.property(fc.array(record, { maxLength: 8 }), (records) => {
        const bytes = Buffer.concat(records.map(encodeWalRecord));
        const { records: back, validBytes } = decodeWal(bytes);
        expect(validBytes).toBe(bytes.length);
        expect(back).toEqual(records.map(normalized));
        for (const r of back) if (r.type === 'append') expect(Object.getPrototypeOf(r.data)).toBe(Uint8Array.prototype);
      }),
    );
  });

  it('frames each record as u32 length | u32 crc32(payload) | payload', () => {
    fc.assert(
      fc.property(record, (r) => {
        const b = encodeWalRecord(r);
        const payload = b.subarray(WAL_HEADER_BYTES);
        expect(b.readUInt32LE(0)).toBe(payload.length);
        expect(b.readUInt32LE(4)).toBe(crc32(payload));
      }),
    );
  });

  it('stops at a torn tail: whole records before the cut, validBytes at the last boundary', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), fc.nat(), (records, cutSeed) => {
        const parts = records.map(encodeWalRecord);
        const bytes = Buffer.concat(parts);
        const cut = cutSeed % (bytes.length + 1);
        let whole = 0;
        let boundary = 0;
        while (whole < parts.length && boundary + parts[whole]!.length <= cut) boundary += parts[whole++]!.length;
        const { records: back, validBytes } = decodeWal(bytes.subarray(0, cut));
        expect(validBytes).toBe(boundary);
        expect(back).toEqual(records.slice(0, whole).map(normalized));
      }),
    );
  });

  it('stops at a corrupt record: its checksum fails and nothing after it is read', () => {
    fc.assert(
      fc.property(fc.array(record, { minLength: 1, maxLength: 6 }), fc.nat(), fc.nat(), (records, which, byte) => {
        const parts = records.map(encodeWalRecord);
        const i = which % parts.length;
        const target = parts[i]!;
        if (target.length <= WAL_HEADER_BYTES) return;
        const at = WAL_HEADER_BYTES + (byte % (target.length - WAL_HEADER_BYTES));
        const bad = Buffer.from(target);
        bad[at] = bad[at]! ^ 0xff;
        const bytes = Buffer.concat([...parts.slice(0, i), bad, ...parts.slice(i + 1)]);
        const { records: back, validBytes } = decodeWal(bytes);
        expect(validBytes).toBe(parts.slice(0, i).reduce((n, p) => n + p.length, 0));
        expect(back).toEqual(records.slice(0, i).map(normalized));
      }),
    );
  });

  it('refuses what a u32 cannot hold instead of wrapping it', () => {
    expect(() => encodeWalRecord({ type: 'fence', ns: 'n', shard: -1, value: 1 })).toThrow(RangeError);
    expect(() => encodeWalRecord({ type: 'fence', ns: 'n', shard: 2 ** 32, value: 1 })).toThrow(RangeError);
  });

  it('reads an appends record (version 2) as the same appends, in order, as one append record each (version 1)', () => {
    fc.assert(
      fc.property(fc.array(append, { maxLength: 8 }), (entries) => {
        const [batch] = decodeWal(encodeWalAppends(entries)).records;
        const single = decodeWal(Buffer.concat(entries.map((e) => encodeWalRecord({ type: 'append', ...e })))).records;
        expect(batch).toEqual({ type: 'appends', entries: single.map(({ type: _, ...e }) => e) });
      }),
    );
    expect(() => encodeWalAppends([{ ns: 'n', shard: 2 ** 32, window: 0, id: 'i', key: 'k', data: new Uint8Array(0) }])).toThrow(RangeError);
  });

  it('writes the hot tier\'s appends with their series parts encoded once byte for byte as encodeWalAppends, data where dataAt says', () => {
    fc.assert(
      fc.property(fc.array(append, { maxLength: 8 }), fc.nat(8), fc.nat(8), (entries, a, b) => {
        const from = Math.min(a, b, entries.length);
        const to = Math.min(Math.max(a, b), entries.length);
        const hot = entries.map((e) => ({ ref: { ns: e.ns, shard: e.shard }, window: e.window, id: e.id, key: { metric: 'unused', tags: {} }, data: e.data }));
        const series = entries.slice(from, to).map((e) => walSeriesBytes(e.id, e.key));
        const dataAt = new Uint32Array(to - from);
        const bytes = encodeHotAppends(hot, from, to, series, dataAt);
        expect(Buffer.from(bytes).equals(encodeWalAppends(entries.slice(from, to)))).toBe(true);
        for (let i = from; i < to; i++) expect(Buffer.from(bytes.subarray(dataAt[i - from], dataAt[i - from]! + entries[i]!.data.length)).equals(Buffer.from(entries[i]!.data))).toBe(true);
      }),
    );
    const series = [walSeriesBytes('i', 'k')];
    expect(() => encodeHotAppends([{ ref: { ns: 'n', shard: 2 ** 32 }, window: 0, id: 'i', key: { metric: 'm', tags: {} }, data: new Uint8Array(0) }], 0, 1, series, new Uint32Array(1))).toThrow(RangeError);
  });

  it('reports an appends record naming a namespace outside its table as corruption', () => {
    // type 5, no namespaces, one entry pointing at namespace 0.
    const payload = Buffer.from([5, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0]);
    const head = Buffer.alloc(8);
    head.writeUInt32LE(payload.length, 0);
    head.writeUInt32LE(crc32(payload), 4);
    expect(() => decodeWal(Buffer.concat([head, payload]))).toThrow(/not in the record's table/);
  });

  it('reports an intact record of an unknown type as corruption', () => {
    const payload = Buffer.from([9, 0, 0, 0, 0, 0, 0, 0, 0]);
    const head = Buffer.alloc(8);
    head.writeUInt32LE(payload.length, 0);
    head.writeUInt32LE(crc32(payload), 4);
    expect(() => decodeWal(Buffer.concat([head, payload]))).toThrow(CorruptDataError);
  });
});
