import { shardOf, windowStart, type HotAppend, type HotTier, type IngestLog } from '@s4/core';
import { RecordEncoder } from '@s4/format';
import type { SeriesWrite } from './validate.js';

export interface WriterOptions {
  readonly ns: string;
  readonly shards: number;
  readonly maxRecordBytes: number;
  /** The namespace of a metric when there are several (libs/engine namespaces); else `ns`, `shards`, `maxRecordBytes`. */
  readonly route?: (metric: string) => { readonly ns: string; readonly shards: number; readonly maxRecordBytes: number };
}

export interface WriteResult {
  readonly samples: number;
  readonly series: number;
  readonly bytes: number;
  /** In the ingest log (S4_INGEST=kafka), not yet in the hot tier: answer 202, not 204. */
  readonly queued: boolean;
}

/**
 * The write path: validated series → one append per (series, window) in the hot tier. Every
 * record is encoded and size-checked before the first byte is written, so a rejected request
 * changes nothing. With an ingest log (S4_INGEST=kafka) the same appends go to the log instead,
 * and the ingest role hands them to `appendEncoded` in the process that consumes them.
 */
export class Writer {
  constructor(
    private readonly hot: HotTier,
    private readonly options: WriterOptions,
    private readonly log: IngestLog | null = null,
  ) {}

  encode(series: readonly SeriesWrite[]): { appends: HotAppend[]; result: WriteResult } {
    const appends: HotAppend[] = [];
    let samples = 0;
    let bytes = 0;
    const { route } = this.options;
    const encoders = new Map<number, RecordEncoder>();
    for (const s of series) {
      const { ns, shards, maxRecordBytes } = route ? route(s.key.metric) : this.options;
      const ref = { ns, shard: shardOf(s.id, shards) };
      let enc = encoders.get(maxRecordBytes);
      if (!enc) encoders.set(maxRecordBytes, (enc = new RecordEncoder(maxRecordBytes)));
      const names = Object.keys(s.fields);
      const keys = enc.keysOf(names);
      const columns = names.map((f) => s.fields[f]!);
      const byWindow = new Map<number, number[]>();
      for (let j = 0; j < s.ts.length; j++) {
        const w = windowStart(s.ts[j]!);
        let list = byWindow.get(w);
        if (!list) byWindow.set(w, (list = []));
        list.push(j);
      }
      for (const [window, indexes] of byWindow) {
        if (!enc.batch(s.ts, names, columns, indexes)) for (const j of indexes) enc.record(s.ts[j]!, keys, columns, j, s.key.metric);
        const data = enc.take();
        bytes += data.length;
        appends.push({ ref, window, id: s.id, key: s.key, data });
      }
      samples += s.ts.length;
    }
    return { appends, result: { samples, series: series.length, bytes, queued: this.log !== null } };
  }

  /** Resolves once every sample is durable in the hot tier, or in the ingest log when there is one. */
  async write(series: readonly SeriesWrite[]): Promise<WriteResult> {
    const { appends, result } = this.encode(series);
    if (this.log) await this.log.publish(appends);
    else await this.hot.append(appends);
    return result;
  }

  /**
   * Appends `encode` made earlier (in an API process, through the ingest log), in their order:
   * durable in the hot tier when this resolves. A batch of many requests repeats the same series:
   * their bytes for one (series, window) are joined into one append (a log is a concatenation of
   * self-delimiting records, so joining keeps each record and its order), and the hot tier gets
   * them APPEND_CHUNK at a time, so a large backlog never becomes one huge call.
   */
  async appendEncoded(appends: readonly HotAppend[]): Promise<void> {
    const merged = new Map<string, { first: HotAppend; parts: Uint8Array[]; bytes: number }>();
    for (const a of appends) {
      const key = `${a.ref.ns}\u0000${a.ref.shard}\u0000${a.window}\u0000${a.id}`;
      const m = merged.get(key);
      if (m) {
        m.parts.push(a.data);
        m.bytes += a.data.length;
      } else merged.set(key, { first: a, parts: [a.data], bytes: a.data.length });
    }
    const joined = [...merged.values()].map(({ first, parts, bytes }) => (parts.length === 1 ? first : { ...first, data: concat(parts, bytes) }));
    for (let i = 0; i < joined.length; i += APPEND_CHUNK) await this.hot.append(joined.slice(i, i + APPEND_CHUNK));
  }
}

/** Appends per hot-tier call when writing a consumed batch (each is one Redis script argument group). */
const APPEND_CHUNK = 1_000;

function concat(parts: readonly Uint8Array[], bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
