import { shardOf, windowStart, type HotAppend, type HotTier, type IngestLog, type ShardRef } from '@s4/core';
import { RecordEncoder, concatBytes } from '@s4/format';
import { runSteps, runStepsSliced, type Slices } from '../concurrency.js';
import type { SeriesWrite } from './validate.js';

/** A metric's namespace as one request's encoding uses it: its ShardRefs, made as shards are met, and the encoder of its record limit. */
interface Route {
  readonly ns: string;
  readonly shards: number;
  readonly refs: ShardRef[];
  readonly enc: RecordEncoder;
}

/** Series encoded between two looks at the clock. */
const STEP = 256;

export interface WriterOptions {
  readonly ns: string;
  readonly shards: number;
  readonly maxRecordBytes: number;
  /** The namespace of a metric when there are several (libs/engine namespaces); else `ns`, `shards`, `maxRecordBytes`. */
  readonly route?: (metric: string) => { readonly ns: string; readonly shards: number; readonly maxRecordBytes: number };
}

/** A request's records, encoded and size-checked, not yet written (Writer.encodeSliced, then Writer.commit). */
export interface EncodedWrite {
  readonly appends: HotAppend[];
  readonly result: WriteResult;
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

  encode(series: readonly SeriesWrite[]): EncodedWrite {
    return runSteps(this.encodeSteps(series));
  }

  /** `encode` as steps (a yield every STEP series), so that `write` can give the event loop a turn between them. */
  private *encodeSteps(series: readonly SeriesWrite[]): Generator<void, EncodedWrite> {
    const appends: HotAppend[] = [];
    let samples = 0;
    let bytes = 0;
    const { route } = this.options;
    // Per request, not per series: the namespace of each metric with its ShardRefs (one per shard)
    // and its encoder (one buffer per record limit), one lookup per series (a scrape's metrics
    // alternate series by series, so its route changes at nearly every series).
    const routes = new Map<string, Route>();
    const refs = new Map<string, ShardRef[]>();
    const encoders = new Map<number, RecordEncoder>();
    const routeOf = (r: { readonly ns: string; readonly shards: number; readonly maxRecordBytes: number }): Route => {
      let nsRefs = refs.get(r.ns);
      if (!nsRefs) refs.set(r.ns, (nsRefs = []));
      let enc = encoders.get(r.maxRecordBytes);
      if (!enc) encoders.set(r.maxRecordBytes, (enc = new RecordEncoder(r.maxRecordBytes)));
      return { ns: r.ns, shards: r.shards, refs: nsRefs, enc };
    };
    const single = route ? null : routeOf(this.options);
    for (let i = 0; i < series.length; i++) {
      if ((i & (STEP - 1)) === STEP - 1) yield;
      const s = series[i]!;
      let r = single;
      if (!r) {
        r = routes.get(s.key.metric) ?? null;
        if (!r) routes.set(s.key.metric, (r = routeOf(route!(s.key.metric))));
      }
      const { ns, shards, refs: nsRefs, enc } = r;
      const shard = shardOf(s.id, shards);
      const ref = (nsRefs[shard] ??= { ns, shard });
      samples += s.ts.length;
      if (s.ts.length === 1) {
        // The scrape shape: one sample per series per request.
        enc.recordOf(s.ts[0]!, s.fields, 0, s.key.metric);
        const data = enc.take();
        bytes += data.length;
        appends.push({ ref, window: windowStart(s.ts[0]!), id: s.id, key: s.key, data, hint: s.mark });
        continue;
      }
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
        appends.push({ ref, window, id: s.id, key: s.key, data, hint: s.mark });
      }
    }
    return { appends, result: { samples, series: series.length, bytes, queued: this.log !== null } };
  }

  /**
   * Resolves once every sample is durable in the hot tier, or in the ingest log when there is one.
   * Encoding gives the event loop a turn whenever a slice has run `sliceMs` (a request of 40,000
   * series must not stall the HTTP thread); every record is still encoded, and size-checked,
   * before the first byte is written.
   */
  async write(series: readonly SeriesWrite[], sliceMs = Number.POSITIVE_INFINITY): Promise<WriteResult> {
    return this.commit(await this.encodeSliced(series, sliceMs));
  }

  /**
   * `write` in two halves, for a caller that lets go of the request's series between them: what
   * `commit` needs (the records, the series keys) holds nothing of the parsed request, which can
   * then be collected young while the write waits for durability.
   */
  encodeSliced(series: readonly SeriesWrite[], sliceMs: number | Slices): Promise<EncodedWrite> {
    return runStepsSliced(this.encodeSteps(series), sliceMs);
  }

  async commit({ appends, result }: EncodedWrite): Promise<WriteResult> {
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
    const merged = new Map<string, { first: HotAppend; parts: Uint8Array[] }>();
    for (const a of appends) {
      const key = `${a.ref.ns}\u0000${a.ref.shard}\u0000${a.window}\u0000${a.id}`;
      const m = merged.get(key);
      if (m) m.parts.push(a.data);
      else merged.set(key, { first: a, parts: [a.data] });
    }
    const joined = [...merged.values()].map(({ first, parts }) => (parts.length === 1 ? first : { ...first, data: concatBytes(parts) }));
    for (let i = 0; i < joined.length; i += APPEND_CHUNK) await this.hot.append(joined.slice(i, i + APPEND_CHUNK));
  }
}

/** Appends per hot-tier call when writing a consumed batch (each is one Redis script argument group). */
const APPEND_CHUNK = 1_000;
