import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LimitError, type HotAppend } from '@s4/core';
import { decodeIngestMessage } from '@s4/format';
import { MAX_MESSAGE_BYTES, MESSAGE_BYTES, ROUND_BYTES, pack, rounds, topicSettings, type ShardKey } from './ingest-log.js';

const append = (shard: number, id: string, bytes: number): HotAppend => ({
  ref: { ns: 'n', shard },
  window: 0,
  id,
  key: { metric: 'm', tags: { id } },
  data: new Uint8Array(bytes).fill(shard),
});

/** Per shard, the appends a list of produce rounds delivers, in delivery order. */
function delivered(list: Map<ShardKey, Buffer[]>[]): Map<number, string[]> {
  const out = new Map<number, string[]>();
  for (const round of list)
    for (const [key, values] of round) for (const v of values) for (const a of decodeIngestMessage(v, '1')) out.set(key.shard, [...(out.get(key.shard) ?? []), a.id]);
  return out;
}

describe('producing to the ingest log', () => {
  it('packs a request per shard into messages of about 1 MiB, each shard in its order', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ shard: fc.nat({ max: 3 }), bytes: fc.nat({ max: 400_000 }) }), { maxLength: 40 }), (spec) => {
        const appends = spec.map((x, i) => append(x.shard, `a${i}`, x.bytes));
        const packed = pack(appends);
        for (const values of packed.values()) for (const v of values) if (decodeIngestMessage(v, '1').length > 1) expect(v.length).toBeLessThanOrEqual(MESSAGE_BYTES);
        const expected = new Map<number, string[]>();
        for (const a of appends) expected.set(a.ref.shard, [...(expected.get(a.ref.shard) ?? []), a.id]);
        expect(delivered([packed])).toEqual(expected);
      }),
      { numRuns: 30 },
    );
  });

  it('groups concurrent requests into rounds of at most ~4 MiB per shard, keeping arrival order', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.record({ shard: fc.nat({ max: 2 }), bytes: fc.nat({ max: 900_000 }) }), { maxLength: 6 }), { maxLength: 8 }), (requests) => {
        let n = 0;
        const groups = requests.map((r) => pack(r.map((x) => append(x.shard, `a${n++}`, x.bytes))));
        const list = rounds(groups);
        for (const round of list)
          for (const values of round.values()) if (values.length > 1) expect(values.reduce((b, v) => b + v.length, 0)).toBeLessThanOrEqual(ROUND_BYTES);
        const expected = new Map<number, string[]>();
        for (const g of groups) for (const [k, ids] of delivered([g])) expected.set(k, [...(expected.get(k) ?? []), ...ids]);
        expect(delivered(list)).toEqual(expected);
      }),
      { numRuns: 30 },
    );
  });

  it('refuses, before producing anything, an append larger than a Kafka message may be (413)', () => {
    const big = append(1, 'big', MAX_MESSAGE_BYTES);
    expect(() => pack([append(0, 'ok', 10), big])).toThrow(LimitError);
    try {
      pack([big]);
    } catch (e) {
      expect((e as LimitError).status).toBe(413);
      expect((e as LimitError).message).toMatch(/series m in the hour from 1970-01-01T00:00:00.000Z encode to \d+ bytes/);
    }
  });

  it('creates topics with the settings Amazon MSK documents; only what MSK Serverless accepts with replication 0', () => {
    const names = (r: number) => topicSettings(r, 86_400_000).map((e) => `${e.name}=${e.value}`);
    expect(names(3)).toEqual(['cleanup.policy=delete', 'retention.ms=86400000', `max.message.bytes=${MAX_MESSAGE_BYTES}`, 'min.insync.replicas=2', 'unclean.leader.election.enable=false']);
    expect(names(1)).toContain('min.insync.replicas=1');
    expect(names(0)).toEqual(['cleanup.policy=delete', 'retention.ms=86400000', `max.message.bytes=${MAX_MESSAGE_BYTES}`]);
  });
});
