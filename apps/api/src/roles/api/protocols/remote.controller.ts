import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiHeader, ApiOperation, ApiProduces, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitError, S4Error, ValidationError, type ValidationIssue } from '@s4/core';
import type { Config } from '@s4/config';
import type { QueryEngine } from '@s4/engine';
import { decodeReadRequest, decodeWriteRequest, decodeWriteRequestV2, encodeReadResponse, snappyCompress, type DecodedWrite, type PromSeries } from '@s4/format';
import { CONFIG } from '../../../http/tokens.js';
import { Ingest } from '../ingest.js';
import { ERROR_SCHEMA } from '../openapi.js';
import { QUERY_ENGINE } from '../tokens.js';
import { remapIssues } from './issues.js';
import { compileSelector, labelsOf, METRIC_LABEL, selectData } from './select.js';

const V2_PROTO = 'io.prometheus.write.v2.request';

/**
 * Prometheus remote storage: `remote_write` (v1 and v2 messages) into S4 and `remote_read`
 * (SAMPLES responses) out of it, so a Prometheus can keep its long-term data here. A series'
 * `__name__` is the metric, its other labels are tags, its samples the field `value`.
 */
@ApiTags('prometheus')
@Controller('api/v1')
export class RemoteController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(Ingest) private readonly ingest: Ingest,
    @Inject(QUERY_ENGINE) private readonly engine: QueryEngine,
  ) {}

  @Post('write')
  @ApiOperation({
    summary: 'Prometheus remote write (1.0 and 2.0)',
    description:
      'Body: a snappy-compressed (block format) protobuf prometheus.WriteRequest, or io.prometheus.write.v2.Request when the Content-Type says proto=io.prometheus.write.v2.Request. 204 once every sample is durable. Staleness markers are not stored; native histograms are refused (400) with nothing written.',
  })
  @ApiConsumes('application/x-protobuf')
  @ApiHeader({ name: 'Content-Encoding', required: true, description: 'snappy' })
  @ApiResponse({ status: 204, description: 'Every sample is durable' })
  @ApiResponse({ status: 400, description: 'Not valid snappy/protobuf, or a series without __name__; nothing was written', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 503, description: 'A store is unavailable; Prometheus retries', schema: ERROR_SCHEMA })
  async write(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const body = protobufBody(req);
    const v2 = /proto=([^;]+)/i.exec(req.headers['content-type'] ?? '')?.[1]?.trim().toLowerCase() === V2_PROTO;
    const decoded = decodeOrThrow(() => (v2 ? decodeWriteRequestV2(body) : decodeWriteRequest(body)));
    if (decoded.histograms > 0) throw new S4Error('invalid_request', `the request holds ${decoded.histograms} native histogram series; S4 stores float samples only (turn native histograms off for this remote_write, or drop them with write_relabel_configs)`, 400);
    const { series, indexes } = toS4(decoded);
    let samples = 0;
    if (series.length > 0) {
      try {
        samples = (await this.ingest.write({ kind: 'json', body: { series } })).samples;
      } catch (e) {
        throw remapIssues(e, /^series\[(\d+)\]/, (k, rest) => `timeseries[${indexes[k]}] ${series[k]!.metric}${rest}`);
      }
    }
    if (v2) void reply.header('x-prometheus-remote-write-samples-written', String(samples)).header('x-prometheus-remote-write-histograms-written', '0').header('x-prometheus-remote-write-exemplars-written', '0');
    await reply.status(204).send();
  }

  @Post('read')
  @ApiOperation({ summary: 'Prometheus remote read (SAMPLES responses)', description: 'Body: a snappy-compressed protobuf prometheus.ReadRequest. Answers a snappy-compressed ReadResponse; labels sorted, `__name__` first among equals.' })
  @ApiConsumes('application/x-protobuf')
  @ApiProduces('application/x-protobuf')
  @ApiResponse({ status: 200, description: 'prometheus.ReadResponse, snappy-compressed' })
  @ApiResponse({ status: 400, description: 'Bad request, a selector matching everything, or only streamed chunks accepted', schema: ERROR_SCHEMA })
  async read(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const request = decodeOrThrow(() => decodeReadRequest(protobufBody(req)));
    if (request.acceptedResponseTypes.length > 0 && !request.acceptedResponseTypes.includes(0))
      throw new S4Error('invalid_request', 'S4 answers remote read with SAMPLES responses only; this client accepts only streamed chunks', 400);
    const maxPoints = this.config.query.maxPoints;
    let points = 0;
    const results: PromSeries[][] = [];
    for (const q of request.queries) {
      const sel = compileSelector(q.matchers);
      const out: PromSeries[] = [];
      for await (const r of selectData(this.engine, sel, q.start, q.end + 1)) {
        const col = r.fields.value ?? [];
        const s: PromSeries = { labels: labelsOf(r), ts: [], values: [] };
        for (let i = 0; i < r.ts.length; i++) {
          const v = col[i];
          if (typeof v !== 'number') continue;
          s.ts.push(r.ts[i]!);
          s.values.push(v);
        }
        points += s.ts.length;
        if (points > maxPoints) throw new LimitError('S4_MAX_QUERY_POINTS', maxPoints, `a remote read answer would hold more than ${maxPoints} samples; read a shorter range`, 413);
        if (s.ts.length > 0) out.push(s);
      }
      results.push(out);
    }
    await reply.status(200).header('content-type', 'application/x-protobuf').header('content-encoding', 'snappy').send(Buffer.from(snappyCompress(encodeReadResponse(results))));
  }
}

function protobufBody(req: FastifyRequest): Uint8Array {
  if (!(req.body instanceof Uint8Array)) throw new S4Error('unsupported_media_type', 'send Content-Type: application/x-protobuf with Content-Encoding: snappy', 415);
  return req.body;
}

function decodeOrThrow<T>(decode: () => T): T {
  try {
    return decode();
  } catch (e) {
    throw new S4Error('invalid_request', `body is not a valid message: ${(e as Error).message}`, 400);
  }
}

interface S4Series {
  metric: string;
  tags: Record<string, string>;
  ts: number[];
  fields: { value: number[] };
}

/** Prometheus series → S4 columns; empty label values mean "no such label", as in Prometheus. */
function toS4(decoded: DecodedWrite): { series: S4Series[]; indexes: number[] } {
  const issues: ValidationIssue[] = [];
  const out: S4Series[] = [];
  const indexes: number[] = [];
  decoded.series.forEach((s, index) => {
    let metric: string | undefined;
    const tags = Object.create(null) as Record<string, string>;
    for (const [name, value] of s.labels) {
      if (name === METRIC_LABEL) metric = value;
      else if (value === '') continue;
      else if (Object.hasOwn(tags, name)) issues.push({ path: `timeseries[${index}]`, message: `label ${JSON.stringify(name)} appears twice` });
      else tags[name] = value;
    }
    if (!metric) {
      issues.push({ path: `timeseries[${index}]`, message: 'has no __name__ label (S4 needs a metric name)' });
      return;
    }
    if (s.ts.length === 0) return;
    out.push({ metric, tags, ts: s.ts, fields: { value: s.values } });
    indexes.push(index);
  });
  if (issues.length > 0) throw new ValidationError(issues.slice(0, 100));
  return { series: out, indexes };
}
