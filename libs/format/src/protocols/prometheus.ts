import { PbReader, PbWriter, ProtobufError, WIRE_FIXED64, WIRE_LEN, WIRE_VARINT } from './protobuf.js';

/**
 * The Prometheus remote-storage messages S4 reads and writes, from the project's own .proto
 * files (prompb/types.proto, remote.proto; io/prometheus/write/v2/types.proto):
 *
 *   v1 WriteRequest { repeated TimeSeries timeseries = 1; repeated MetricMetadata metadata = 3 }
 *      TimeSeries   { repeated Label labels = 1; repeated Sample samples = 2;
 *                     repeated Exemplar exemplars = 3; repeated Histogram histograms = 4 }
 *      Label        { string name = 1; string value = 2 }
 *      Sample       { double value = 1; int64 timestamp = 2 }
 *   v2 Request     { repeated string symbols = 4; repeated TimeSeries timeseries = 5 }
 *      TimeSeries   { repeated uint32 labels_refs = 1; repeated Sample samples = 2;
 *                     repeated Histogram histograms = 3; ... }
 *   ReadRequest    { repeated Query queries = 1; repeated ResponseType accepted_response_types = 2 }
 *      Query        { int64 start_timestamp_ms = 1; int64 end_timestamp_ms = 2;
 *                     repeated LabelMatcher matchers = 3; ReadHints hints = 4 }
 *      LabelMatcher { Type type = 1; string name = 2; string value = 3 }  (EQ, NEQ, RE, NRE)
 *   ReadResponse   { repeated QueryResult results = 1 }, QueryResult { repeated TimeSeries timeseries = 1 }
 *
 * Fields S4 does not store (exemplars, metadata, hints) are skipped; native histograms are
 * counted so the caller can refuse them.
 */

export interface PromSeries {
  /** In the order the sender gave; `__name__` among them. */
  labels: [name: string, value: string][];
  ts: number[];
  values: number[];
}

export interface DecodedWrite {
  series: PromSeries[];
  /** Native histogram samples, which S4 does not store. */
  histograms: number;
  /** Staleness markers (the special NaN Prometheus writes when a series disappears), left out of `series`. */
  stale: number;
}

export type MatchType = 'EQ' | 'NEQ' | 'RE' | 'NRE';
const MATCH_TYPES: readonly MatchType[] = ['EQ', 'NEQ', 'RE', 'NRE'];

export interface LabelMatcher {
  type: MatchType;
  name: string;
  value: string;
}

export interface ReadQuery {
  /** Inclusive, ms. */
  start: number;
  /** Inclusive, ms. */
  end: number;
  matchers: LabelMatcher[];
}

export interface DecodedRead {
  queries: ReadQuery[];
  /** 0 = SAMPLES, 1 = STREAMED_XOR_CHUNKS; empty means SAMPLES. */
  acceptedResponseTypes: number[];
}

/** Prometheus' staleness marker: a NaN with this exact bit pattern. */
const STALE_HI = 0x7ff00000;
const STALE_LO = 0x00000002;

function isStale(r: PbReader): boolean {
  // Read before double() advances: the marker is told from other NaNs only by its bits.
  const b = r.buf;
  const p = r.pos;
  return (b[p]! | (b[p + 1]! << 8) | (b[p + 2]! << 16) | (b[p + 3]! << 24)) >>> 0 === STALE_LO && (b[p + 4]! | (b[p + 5]! << 8) | (b[p + 6]! << 16) | (b[p + 7]! << 24)) >>> 0 === STALE_HI;
}

/** Sample { double value = 1; int64 timestamp = 2 } into the series' columns; false for a staleness marker. */
function readSample(r: PbReader, s: PromSeries): boolean {
  let value = 0;
  let ts = 0;
  let stale = false;
  while (r.more()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === WIRE_FIXED64) {
      stale = isStale(r);
      value = r.double();
    } else if (field === 2 && wire === WIRE_VARINT) ts = r.int64();
    else r.skip(wire);
  }
  if (stale) return false;
  s.ts.push(ts);
  s.values.push(value);
  return true;
}

/** A v1 WriteRequest. */
export function decodeWriteRequest(buf: Uint8Array): DecodedWrite {
  const r = new PbReader(buf);
  const out: DecodedWrite = { series: [], histograms: 0, stale: 0 };
  while (r.more()) {
    const [field, wire] = r.tag();
    if (field !== 1) {
      r.skip(wire);
      continue;
    }
    r.expect(field, wire, WIRE_LEN);
    const t = r.sub();
    const s: PromSeries = { labels: [], ts: [], values: [] };
    while (t.more()) {
      const [f, w] = t.tag();
      if (f === 1 && w === WIRE_LEN) {
        const l = t.sub();
        let name = '';
        let value = '';
        while (l.more()) {
          const [lf, lw] = l.tag();
          if (lf === 1 && lw === WIRE_LEN) name = l.string();
          else if (lf === 2 && lw === WIRE_LEN) value = l.string();
          else l.skip(lw);
        }
        s.labels.push([name, value]);
      } else if (f === 2 && w === WIRE_LEN) {
        if (!readSample(t.sub(), s)) out.stale++;
      } else if (f === 4 && w === WIRE_LEN) {
        t.skip(w);
        out.histograms++;
      } else t.skip(w);
    }
    out.series.push(s);
  }
  return out;
}

export function encodeWriteRequest(series: readonly PromSeries[]): Uint8Array {
  const w = new PbWriter();
  for (const s of series) w.message(1, (t) => writeSeries(t, s));
  return w.finish();
}

/** Proto3 leaves fields at their default (0, "") out; so does this encoder, byte for byte as Prometheus. */
function writeSeries(t: PbWriter, s: PromSeries): void {
  for (const [name, value] of s.labels)
    t.message(1, (l) => {
      if (name !== '') l.string(1, name);
      if (value !== '') l.string(2, value);
    });
  for (let i = 0; i < s.ts.length; i++) t.message(2, (x) => writeSample(x, s.values[i]!, s.ts[i]!));
}

function writeSample(x: PbWriter, value: number, ts: number): void {
  if (!Object.is(value, 0)) x.double(1, value);
  if (ts !== 0) x.uint(2, ts);
}

/** A v2 Request (io.prometheus.write.v2): labels as pairs of references into `symbols`. */
export function decodeWriteRequestV2(buf: Uint8Array): DecodedWrite {
  const r = new PbReader(buf);
  const symbols: string[] = [];
  const raw: { refs: number[]; s: PromSeries }[] = [];
  const out: DecodedWrite = { series: [], histograms: 0, stale: 0 };
  while (r.more()) {
    const [field, wire] = r.tag();
    if (field === 4 && wire === WIRE_LEN) symbols.push(r.string());
    else if (field === 5 && wire === WIRE_LEN) {
      const t = r.sub();
      const refs: number[] = [];
      const s: PromSeries = { labels: [], ts: [], values: [] };
      while (t.more()) {
        const [f, w] = t.tag();
        if (f === 1) t.varints(w, refs);
        else if (f === 2 && w === WIRE_LEN) {
          if (!readSample(t.sub(), s)) out.stale++;
        } else if (f === 3 && w === WIRE_LEN) {
          t.skip(w);
          out.histograms++;
        } else t.skip(w);
      }
      raw.push({ refs, s });
    } else r.skip(wire);
  }
  for (const { refs, s } of raw) {
    if (refs.length % 2 !== 0) throw new ProtobufError('labels_refs holds an odd number of references');
    for (let k = 0; k < refs.length; k += 2) {
      const name = symbols[refs[k]!];
      const value = symbols[refs[k + 1]!];
      if (name === undefined || value === undefined) throw new ProtobufError(`label reference ${name === undefined ? refs[k] : refs[k + 1]} is beyond the ${symbols.length} symbols`);
      s.labels.push([name, value]);
    }
    out.series.push(s);
  }
  return out;
}

export function encodeWriteRequestV2(series: readonly PromSeries[]): Uint8Array {
  const symbols = new Map<string, number>([['', 0]]);
  const ref = (s: string) => {
    let k = symbols.get(s);
    if (k === undefined) symbols.set(s, (k = symbols.size));
    return k;
  };
  const refs = series.map((s) => s.labels.flatMap(([n, v]) => [ref(n), ref(v)]));
  const w = new PbWriter();
  for (const s of symbols.keys()) w.string(4, s);
  series.forEach((s, i) =>
    w.message(5, (t) => {
      t.packed(1, refs[i]!);
      for (let k = 0; k < s.ts.length; k++) t.message(2, (x) => writeSample(x, s.values[k]!, s.ts[k]!));
    }),
  );
  return w.finish();
}

export function decodeReadRequest(buf: Uint8Array): DecodedRead {
  const r = new PbReader(buf);
  const out: DecodedRead = { queries: [], acceptedResponseTypes: [] };
  while (r.more()) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === WIRE_LEN) {
      const q = r.sub();
      const query: ReadQuery = { start: 0, end: 0, matchers: [] };
      while (q.more()) {
        const [f, w] = q.tag();
        if (f === 1 && w === WIRE_VARINT) query.start = q.int64();
        else if (f === 2 && w === WIRE_VARINT) query.end = q.int64();
        else if (f === 3 && w === WIRE_LEN) {
          const m = q.sub();
          const matcher: LabelMatcher = { type: 'EQ', name: '', value: '' };
          while (m.more()) {
            const [mf, mw] = m.tag();
            if (mf === 1 && mw === WIRE_VARINT) {
              const t = MATCH_TYPES[m.varint()];
              if (!t) throw new ProtobufError('unknown label matcher type');
              matcher.type = t;
            } else if (mf === 2 && mw === WIRE_LEN) matcher.name = m.string();
            else if (mf === 3 && mw === WIRE_LEN) matcher.value = m.string();
            else m.skip(mw);
          }
          query.matchers.push(matcher);
        } else q.skip(w);
      }
      out.queries.push(query);
    } else if (field === 2) r.varints(wire, out.acceptedResponseTypes);
    else r.skip(wire);
  }
  return out;
}

export function encodeReadRequest(read: DecodedRead): Uint8Array {
  const w = new PbWriter();
  for (const q of read.queries)
    w.message(1, (x) => {
      x.uint(1, q.start).uint(2, q.end);
      for (const m of q.matchers) x.message(3, (y) => y.uint(1, MATCH_TYPES.indexOf(m.type)).string(2, m.name).string(3, m.value));
    });
  if (read.acceptedResponseTypes.length > 0) w.packed(2, read.acceptedResponseTypes);
  return w.finish();
}

/** A ReadResponse of the SAMPLES type: one QueryResult per query, in order. */
export function encodeReadResponse(results: readonly (readonly PromSeries[])[]): Uint8Array {
  const w = new PbWriter();
  for (const series of results) w.message(1, (q) => series.forEach((s) => q.message(1, (t) => writeSeries(t, s))));
  return w.finish();
}

export function decodeReadResponse(buf: Uint8Array): PromSeries[][] {
  const r = new PbReader(buf);
  const out: PromSeries[][] = [];
  while (r.more()) {
    const [field, wire] = r.tag();
    if (field !== 1 || wire !== WIRE_LEN) {
      r.skip(wire);
      continue;
    }
    // A QueryResult's timeseries have the layout of a WriteRequest's.
    const q = r.sub();
    const [start, end] = [q.pos, q.end];
    out.push(decodeWriteRequest(q.buf.subarray(start, end)).series);
  }
  return out;
}
