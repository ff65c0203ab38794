import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { NamespaceSet, S3_STANDARD_PRICES, type AdmitLimits, type AdmitResult, type CardinalityStore, type NamespacePolicy, type SeriesRef } from '@s4/core';
import type { SeriesWrite } from '../write/validate.js';
import { Admission } from './admission.js';

const policy: NamespacePolicy = {
  name: 'default',
  prefixes: [],
  shards: 4,
  rawRetentionMs: null,
  rollups: [],
  backfillMs: 10 * 86_400_000,
  hotMs: 60_000,
  limits: { maxRecordBytes: 1 << 20, maxFields: 100, maxActiveSeries: undefined, maxNewSeriesPerMinute: undefined, maxSamplesPerSecond: undefined },
};
const policies = new NamespaceSet({ defaultNamespace: 'default', namespaces: [policy], prices: S3_STANDARD_PRICES });

/** A store that admits everything and records which series each call asked about. */
function recordingStore(): { store: CardinalityStore; asked: string[][] } {
  const asked: string[][] = [];
  const store = {
    admit: (_ns: string, series: readonly SeriesRef[], _l: AdmitLimits, _now: number): Promise<AdmitResult> => {
      asked.push(series.map((s) => s.id));
      return Promise.resolve({ admitted: true, fresh: 0 });
    },
    addSamples: () => Promise.resolve(),
  } as unknown as CardinalityStore;
  return { store, asked };
}

const REFRESH = 1_000;
const T0 = Date.UTC(2026, 10, 27, 10);

describe('admission memo of scanned series (by mark)', () => {
  // A request writes some of 6 series, some with their mark (scanned) and some without; between
  // requests a series may be given another mark, taken from the series holding it (marks are
  // unique among cached series, and go to another series once one is forgotten), or lose its mark.
  type Op = { kind: 'write'; series: number[]; scanned: boolean; advance: number } | { kind: 'remark'; series: number; mark: number | null };
  const op: fc.Arbitrary<Op> = fc.oneof(
    { weight: 3, arbitrary: fc.record({ kind: fc.constant('write' as const), series: fc.uniqueArray(fc.nat(5), { minLength: 1, maxLength: 6 }), scanned: fc.boolean(), advance: fc.integer({ min: 0, max: 700 }) }) },
    { weight: 1, arbitrary: fc.record({ kind: fc.constant('remark' as const), series: fc.nat(5), mark: fc.option(fc.nat(3), { nil: null }) }) },
  );

  it('asks the store about every series this process has not admitted, by its id, within refreshMs; and about no other when marks hold still', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 40 }), async (ops) => {
        const { store, asked } = recordingStore();
        const admission = new Admission(store, () => policies, { refreshMs: REFRESH });
        // The same without marks: the memo by id alone, which the marks must never make skip more.
        const plain = recordingStore();
        const byId = new Admission(plain.store, () => policies, { refreshMs: REFRESH });
        const ids = Array.from({ length: 6 }, (_, i) => `series-${i}`);
        const markOf: (number | null)[] = [0, 1, 2, null, null, null];
        const admittedAt = new Map<string, number>();
        let now = T0;
        // A mark moved, or a series came without its mark: the memo by mark may ask again what the one by id does not.
        let marksMoved = false;
        for (const o of ops) {
          if (o.kind === 'remark') {
            if (o.mark !== null) {
              const holder = markOf.indexOf(o.mark);
              if (holder >= 0) markOf[holder] = null;
            }
            markOf[o.series] = o.mark;
            marksMoved = true;
            continue;
          }
          now += o.advance;
          const writes: SeriesWrite[] = o.series.map((i) => {
            const w = { id: ids[i]!, key: { metric: 'm', tags: { i: String(i) } }, ts: [now], fields: { value: [1] } };
            const mark = markOf[i];
            return o.scanned && mark !== null ? { ...w, mark } : w;
          });
          if (!o.scanned) marksMoved = true;
          const before = asked.length;
          const plainBefore = plain.asked.length;
          await admission.admit(writes, now);
          await byId.admit(writes.map(({ id, key, ts, fields }) => ({ id, key, ts, fields })), now);
          const checked = new Set(asked.slice(before).flat());
          for (const w of writes) {
            // Skipped: only a series admitted here, by its own id, less than refreshMs ago.
            if (!checked.has(w.id)) expect(now - admittedAt.get(w.id)!).toBeLessThan(REFRESH);
          }
          for (const id of checked) admittedAt.set(id, now);
          // Marks that never moved (and series always scanned): the same questions as the memo by id.
          if (!marksMoved) expect([...checked].sort()).toEqual(plain.asked.slice(plainBefore).flat().sort());
        }
      }),
      { numRuns: 300 },
    );
  });
});
