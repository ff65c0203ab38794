import { LimitError, shardOf, windowStart, type HotAppend, type HotTier } from '@s4/core';
import { msgpack } from '@s4/format';
import type { SeriesWrite } from './validate.js';

export interface WriterOptions {
  readonly ns: string;
  readonly shards: number;
  readonly maxRecordBytes: number;
}

export interface WriteResult {
  readonly samples: number;
  readonly series: number;
  readonly bytes: number;
}

/**
 * The write path: validated series → one append per (series, window) in the hot tier. Every
 * record is encoded and size-checked before the first byte is written, so a rejected request
 * changes nothing.
 */
export class Writer {
  constructor(
    private readonly hot: HotTier,
    private readonly options: WriterOptions,
  ) {}

  encode(series: readonly SeriesWrite[]): { appends: HotAppend[]; result: WriteResult } {
    const appends: HotAppend[] = [];
    let samples = 0;
    let bytes = 0;
    const { ns, shards, maxRecordBytes } = this.options;
    for (const s of series) {
      const ref = { ns, shard: shardOf(s.id, shards) };
      const byWindow = new Map<number, Uint8Array[]>();
      for (let i = 0; i < s.ts.length; i++) {
        const ts = s.ts[i]!;
        const rec = msgpack.pack([ts, s.rows[i]]);
        if (rec.length > maxRecordBytes)
          throw new LimitError('S4_MAX_RECORD_BYTES', maxRecordBytes, `record of ${s.key.metric} at ts ${ts} is ${rec.length} bytes`, 413);
        const w = windowStart(ts);
        let list = byWindow.get(w);
        if (!list) byWindow.set(w, (list = []));
        list.push(rec);
        bytes += rec.length;
      }
      samples += s.ts.length;
      for (const [window, recs] of byWindow) appends.push({ ref, window, id: s.id, key: s.key, data: recs.length === 1 ? recs[0]! : Buffer.concat(recs) });
    }
    return { appends, result: { samples, series: series.length, bytes } };
  }

  /** Resolves once every sample is durable in the hot tier. */
  async write(series: readonly SeriesWrite[]): Promise<WriteResult> {
    const { appends, result } = this.encode(series);
    await this.hot.append(appends);
    return result;
  }
}
