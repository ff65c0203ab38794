import { MsgpackStreamDecoder, checkColumn, joinChunks, packr, toSeriesColumns } from './codec.js';
import { S4DecodeError, S4HttpError, S4ValidationError } from './errors.js';
import { retryPolicy, type RetryOptions } from './retry.js';
import { Transport, decodeJson, type FetchLike, type RetryEvent } from './transport.js';
import { toRecordBatch, type RecordBatch } from './records.js';
import type { ExportSpec, FlushResult, LatestSpec, QueryResult, QuerySpec, RecordSelector, Sample, SeriesColumns, SeriesInfo, SeriesSpec, Time, TimeRange } from './types.js';
import { assertSamples } from './validate.js';
import { S4Writer, type WriterOptions } from './writer.js';

export interface S4ClientOptions {
  /** Base URL of an S4 server, e.g. `http://localhost:8080`. */
  url: string;
  /** Sent as `Authorization: Bearer <apiKey>`. */
  apiKey?: string;
  /** Sent as `X-S4-Namespace`. */
  namespace?: string;
  /** A fetch implementation (tests, proxies, older runtimes). Default: the global fetch. */
  fetch?: FetchLike;
  /** Extra headers on every request. */
  headers?: Record<string, string>;
  /** Per attempt: until the whole answer of a write or query(), until the headers of a stream. Default 30 000. */
  timeoutMs?: number;
  /** Retries of retryable failures (network errors, 429, 502, 503, 504); `false` turns them off. */
  retry?: RetryOptions | false;
  /** Called before every retry of any request. */
  onRetry?: (event: RetryEvent) => void;
  /** Body encoding of writes. Default `msgpack` (smaller and faster to encode than JSON). */
  writeFormat?: 'msgpack' | 'json';
}

/** The most samples one `write()` request carries; larger arrays go as several requests. */
const MAX_REQUEST_SAMPLES = 50_000;

/**
 * A client for one S4 server. Cheap to create, safe to share; holds no connections of its own
 * (keep-alive comes from fetch).
 *
 * ```ts
 * const s4 = new S4Client({ url: 'http://localhost:8080' });
 * await s4.write([{ metric: 'cpu', tags: { host: 'a' }, ts: Date.now(), fields: { value: 0.5 } }]);
 * const { series } = await s4.query({ metric: 'cpu', from: Date.now() - 3_600_000, to: Date.now() });
 * ```
 */
export class S4Client {
  readonly url: string;
  readonly #transport: Transport;
  readonly #writeFormat: 'msgpack' | 'json';

  constructor(options: S4ClientOptions) {
    if (typeof options?.url !== 'string' || !/^https?:\/\//.test(options.url)) {
      throw new S4ValidationError([{ path: 'url', message: `expected an http(s) URL, got ${String(options?.url)}` }]);
    }
    this.url = options.url.replace(/\/+$/, '');
    const headers: Record<string, string> = { ...options.headers };
    if (options.apiKey !== undefined) headers.authorization = `Bearer ${options.apiKey}`;
    if (options.namespace !== undefined) headers['x-s4-namespace'] = options.namespace;
    const fetchImpl: FetchLike = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
    this.#transport = new Transport({
      url: this.url,
      headers,
      fetch: fetchImpl,
      timeoutMs: options.timeoutMs ?? 30_000,
      retry: retryPolicy(options.retry),
      onRetry: options.onRetry,
    });
    this.#writeFormat = options.writeFormat ?? 'msgpack';
  }

  /**
   * Writes samples and resolves when the server has acknowledged all of them. Validates first
   * (S4ValidationError, nothing sent); retries retryable failures. Writing the same series and
   * timestamp again overwrites, so repeating a failed call is always safe.
   */
  async write(samples: Sample | readonly Sample[], options: { signal?: AbortSignal } = {}): Promise<void> {
    const list: readonly Sample[] = Array.isArray(samples) ? samples : [samples as Sample];
    assertSamples(list);
    for (let i = 0; i < list.length; i += MAX_REQUEST_SAMPLES) {
      await this.#post(list.slice(i, i + MAX_REQUEST_SAMPLES), options.signal, undefined);
    }
  }

  /** A batching writer: buffers, sends concurrently, retries, applies back-pressure. See S4Writer. */
  writer(options: WriterOptions = {}): S4Writer {
    return new S4Writer((batch, onRetry) => this.#post(batch, undefined, onRetry), options);
  }

  /**
   * Reads samples into columns: `ts` and numeric fields as Float64Array, other fields as arrays
   * with `null` where a sample lacks the field. Travels as MessagePack with typed arrays.
   * For results larger than memory use `stream()`.
   */
  async query(spec: QuerySpec): Promise<QueryResult> {
    const chunks: SeriesColumns[] = [];
    for await (const chunk of this.stream(spec)) chunks.push(chunk);
    const series = joinChunks(chunks);
    return { series, points: series.reduce((n, s) => n + s.ts.length, 0) };
  }

  /**
   * Reads samples as a stream of column chunks. A long series arrives as several consecutive
   * chunks of the same metric and tags, in time order. Breaking out of the loop cancels the request.
   */
  async *stream(spec: QuerySpec): AsyncGenerator<SeriesColumns, void, undefined> {
    yield* decodeColumns(await this.#openQuery(spec, 'msgpack'));
  }

  /**
   * Records of the series matching `selector` over `range` ([from, to)), as chunks that arrive
   * while the server still reads: each chunk holds one series' records as columns, and builds
   * record objects only when asked (`for (const r of chunk.records())`) or reads one path as a
   * column (`chunk.column('imu.vibration')`). The next chunk is read from the connection only
   * when the loop asks for it, so a slow consumer slows the server down instead of filling
   * memory; breaking out of the loop cancels the request.
   */
  async *records(selector: RecordSelector, range: TimeRange): AsyncGenerator<RecordBatch, void, undefined> {
    const response = await this.#openQuery({ ...selector, from: range.from, to: range.to }, 'msgpack');
    const type = response.headers.get('content-type') ?? '';
    if (type.includes('json')) {
      for await (const s of decodeColumns(response)) yield toRecordBatch(s, checkColumn);
      return;
    }
    const decoder = new MsgpackStreamDecoder();
    for await (const bytes of readBody(response)) for (const value of decoder.push(bytes)) yield toRecordBatch(value, checkColumn);
    for (const value of decoder.end()) yield toRecordBatch(value, checkColumn);
  }

  /**
   * The newest sample of every series matching the selector, within [from, to) (server
   * defaults: `to` = now, `from` = one day before `to`). One point per series, as columns.
   */
  async latest(spec: LatestSpec): Promise<QueryResult> {
    if (typeof spec.metric !== 'string' || spec.metric === '') throw new S4ValidationError([{ path: 'metric', message: 'expected a non-empty string' }]);
    const query = new URLSearchParams({ metric: spec.metric, format: 'msgpack' });
    for (const [k, v] of Object.entries(spec.tags ?? {})) query.append('tag', `${k}:${v}`);
    if (spec.from !== undefined) query.set('from', String(toMs(spec.from, 'from')));
    if (spec.to !== undefined) query.set('to', String(toMs(spec.to, 'to')));
    if (spec.fields !== undefined) query.set('fields', spec.fields.join(','));
    const response = await this.#transport.open({ method: 'GET', path: '/v1/latest', query, headers: { accept: 'application/msgpack' }, signal: spec.signal });
    const series: SeriesColumns[] = [];
    for await (const s of decodeColumns(response)) series.push(s);
    return { series, points: series.length };
  }


  /**
   * Streams a query's answer as raw bytes in a server format (CSV, NDJSON, concatenated
   * MessagePack chunks, JSON), for writing to a file or stdout without decoding.
   */
  async *export(spec: ExportSpec): AsyncGenerator<Uint8Array, void, undefined> {
    yield* readBody(await this.#openQuery(spec, spec.format));
  }

  /** Lists the series matching a selector (all parts optional). */
  async series(spec: SeriesSpec = {}): Promise<SeriesInfo[]> {
    const query = new URLSearchParams();
    if (spec.metric !== undefined) query.set('metric', spec.metric);
    for (const [k, v] of Object.entries(spec.tags ?? {})) query.append('tag', `${k}:${v}`);
    if (spec.from !== undefined) query.set('from', String(toMs(spec.from, 'from')));
    if (spec.to !== undefined) query.set('to', String(toMs(spec.to, 'to')));
    const answer = await this.#transport.request({ method: 'GET', path: '/v1/series', query, signal: spec.signal, headers: { accept: 'application/json' } });
    const body = decodeJson<{ series?: SeriesInfo[] }>(answer, 'GET /v1/series');
    if (!Array.isArray(body.series)) throw new S4DecodeError('GET /v1/series: answer has no series array');
    return body.series;
  }

  /** Admin: moves everything in the hot tier to object storage now (normally done by the segment worker). */
  async flush(options: { signal?: AbortSignal } = {}): Promise<FlushResult> {
    const answer = await this.#transport.request({ method: 'POST', path: '/v1/admin/flush', signal: options.signal, headers: { accept: 'application/json' } });
    return decodeJson<FlushResult>(answer, 'POST /v1/admin/flush');
  }

  /** True when the server answers /readyz with 2xx; false when it is unreachable or not ready. Never retries. */
  async ready(options: { signal?: AbortSignal } = {}): Promise<boolean> {
    try {
      await this.#transport.request({ method: 'GET', path: '/readyz', signal: options.signal, noRetry: true });
      return true;
    } catch (error) {
      if (options.signal?.aborted) throw error;
      return false;
    }
  }

  async #post(samples: Sample[], signal: AbortSignal | undefined, onRetry: ((event: RetryEvent) => void) | undefined): Promise<void> {
    if (samples.length === 0) return;
    const wire = { series: toColumns(samples) };
    const body = this.#writeFormat === 'msgpack' ? packr.pack(wire) : JSON.stringify(wire);
    const contentType = this.#writeFormat === 'msgpack' ? 'application/msgpack' : 'application/json';
    try {
      await this.#transport.request({ method: 'POST', path: '/v1/write', body, headers: { 'content-type': contentType }, signal, onRetry });
    } catch (error) {
      // Too big for the server's request limits: halve and send both parts (each still idempotent).
      if (error instanceof S4HttpError && error.code === 'limit_exceeded' && samples.length > 1) {
        const half = Math.ceil(samples.length / 2);
        await this.#post(samples.slice(0, half), signal, onRetry);
        await this.#post(samples.slice(half), signal, onRetry);
        return;
      }
      throw error;
    }
  }

  #openQuery(spec: QuerySpec, format: string): Promise<Response> {
    if (typeof spec.metric !== 'string' || spec.metric === '') throw new S4ValidationError([{ path: 'metric', message: 'expected a non-empty string' }]);
    const body: Record<string, unknown> = {
      metric: spec.metric,
      tags: spec.tags ?? {},
      from: toMs(spec.from, 'from'),
      to: toMs(spec.to, 'to'),
      format,
    };
    if (spec.fields !== undefined) body.fields = spec.fields;
    // columns=2: compact node columns (smaller number arrays, dictionary strings), which toRecordBatch reads.
    const accept = format === 'msgpack' ? 'application/msgpack; columns=2' : format === 'csv' ? 'text/csv' : format === 'ndjson' ? 'application/x-ndjson' : 'application/json';
    return this.#transport.open({
      method: 'POST',
      path: '/v1/query',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', accept },
      signal: spec.signal,
    });
  }
}

/** Column chunks of a query answer: concatenated MessagePack, or JSON columns from a server or proxy that chose JSON. */
async function* decodeColumns(response: Response): AsyncGenerator<SeriesColumns, void, undefined> {
  const type = response.headers.get('content-type') ?? '';
  if (type.includes('json')) {
    const body = (await response.json()) as { series?: unknown[] };
    if (!Array.isArray(body.series)) throw new S4DecodeError('query answer has no series array');
    for (const s of body.series) yield toSeriesColumns(s);
    return;
  }
  const decoder = new MsgpackStreamDecoder();
  for await (const bytes of readBody(response)) {
    for (const value of decoder.push(bytes)) yield toSeriesColumns(value);
  }
  for (const value of decoder.end()) yield toSeriesColumns(value);
}

interface WireSeries {
  metric: string;
  tags: Record<string, string>;
  ts: number[];
  fields: Record<string, unknown[]>;
}

/**
 * Samples as the server's columnar form, one entry per series, samples in their original order
 * (so the last write of a timestamp still wins). The server validates columns far faster than
 * one object per sample; an absent (or undefined) field is sent as null, which means absent.
 */
function toColumns(samples: readonly Sample[]): WireSeries[] {
  const bySeries = new Map<string, WireSeries>();
  for (const s of samples) {
    const tags = s.tags ?? {};
    const key = `${s.metric}\u0000${JSON.stringify(Object.entries(tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))}`;
    let w = bySeries.get(key);
    if (!w) bySeries.set(key, (w = { metric: s.metric, tags, ts: [], fields: {} }));
    const n = w.ts.length;
    w.ts.push(s.ts);
    for (const [f, v] of Object.entries(s.fields)) {
      if (v === undefined) continue;
      let col = w.fields[f];
      if (!col) w.fields[f] = col = new Array<unknown>(n).fill(null);
      col.push(v);
    }
    for (const col of Object.values(w.fields)) if (col.length === n) col.push(null);
  }
  return [...bySeries.values()];
}

function toMs(time: Time, name: string): number {
  const ms = time instanceof Date ? time.getTime() : time;
  if (!Number.isSafeInteger(ms)) throw new S4ValidationError([{ path: name, message: `expected integer milliseconds or a Date, got ${String(time)}` }]);
  return ms;
}

async function* readBody(response: Response): AsyncGenerator<Uint8Array, void, undefined> {
  const body = response.body;
  if (body === null) return;
  const reader = body.getReader();
  let finished = false;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) {
        finished = true;
        return;
      }
      yield value;
    }
  } finally {
    // The consumer stopped early (break, throw): cancel so the connection is released.
    if (!finished) await reader.cancel().catch(() => undefined);
  }
}


