import { Readable } from 'node:stream';
import { Body, Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiProduces, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitError, type Clock } from '@s4/core';
import type { Config } from '@s4/config';
import type { QueryEngine, SeriesResult } from '@s4/engine';
import { CLOCK, CONFIG, INGEST_LAG, METRICS } from '../../http/tokens.js';
import type { Metrics } from '../../metrics.js';
import type { IngestLagMonitor } from '../ingest/lag.js';
import { ERROR_SCHEMA, MATCH_DOC, QUERY_BODY_SCHEMA, QUERY_RESULT_SCHEMA, SERIES_LIST_SCHEMA } from './openapi.js';
import { CONTENT_TYPES, encode, type AnswerWarning, type Format } from './output/formats.js';
import { isAggregate, matchersFromParams, parseLatestParams, parseOrThrow, parseQueryBody, parseQueryParams, seriesParamsSchema, tagsFromParams, type ParsedQuery } from './query.schema.js';
import { QUERY_ENGINE } from './tokens.js';

@ApiTags('query')
@Controller('v1')
export class QueryController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(QUERY_ENGINE) private readonly query: QueryEngine,
    @Inject(METRICS) private readonly metrics: Metrics,
    @Inject(INGEST_LAG) private readonly lag: IngestLagMonitor | null,
  ) {}

  @Get('query')
  @ApiOperation({
    summary: 'Read samples of the series matching a selector over [from, to)',
    description:
      'json buffers per series; msgpack, ndjson and csv stream. msgpack: concatenated maps {metric, tags, ts: Float64Array, fields: {name: Float64Array | values}}; nested (shredded) fields of records read from segments come as node columns in `shredded` ([name, node, …]) with `names` listing every field in order (node layout: apps/api/src/roles/api/output/columns-wire.ts; with `Accept: application/msgpack; columns=2` compact node columns: integer / float32 / decimal-scaled numbers, dictionary strings), which the SDK turns into records lazily.',
  })
  @ApiQuery({ name: 'metric', required: true })
  @ApiQuery({ name: 'tag', required: false, isArray: true, description: 'key:value, repeatable; all must match' })
  @ApiQuery({ name: 'match', required: false, isArray: true, description: MATCH_DOC })
  @ApiQuery({ name: 'from', required: true, description: 'inclusive; integer ms or ISO-8601' })
  @ApiQuery({ name: 'to', required: true, description: 'exclusive; integer ms or ISO-8601' })
  @ApiQuery({ name: 'fields', required: false, description: 'comma-separated field names' })
  @ApiQuery({ name: 'format', required: false, enum: ['json', 'msgpack', 'csv', 'ndjson'] })
  @ApiQuery({ name: 'step', required: false, description: 'bucket width (30s, 1m, 1h, 1d or ms): one value per epoch-aligned bucket per agg, columns named agg(field)' })
  @ApiQuery({ name: 'agg', required: false, description: 'comma-separated: avg, min, max, sum, count, first, last (default avg)' })
  @ApiQuery({ name: 'groupBy', required: false, description: 'with step: combine series by these tag keys; empty: all matched series as one' })
  @ApiQuery({ name: 'maxPoints', required: false, description: 'raw queries: at most N points per series (first, last, min, max per pixel column)' })
  @ApiProduces(...Object.values(CONTENT_TYPES))
  @ApiResponse({ status: 200, schema: QUERY_RESULT_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async get(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(parseQueryParams(req.query, req.headers.accept), reply, compactColumns(req.headers.accept));
  }

  @Post('query')
  @ApiOperation({ summary: 'The same query with a JSON body' })
  @ApiBody({ schema: QUERY_BODY_SCHEMA })
  @ApiProduces(...Object.values(CONTENT_TYPES))
  @ApiResponse({ status: 200, schema: QUERY_RESULT_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async post(@Req() req: FastifyRequest, @Body() body: unknown, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(parseQueryBody(body, req.headers.accept), reply, compactColumns(req.headers.accept));
  }

  @Get('latest')
  @ApiOperation({ summary: 'The latest sample of every series matching a selector, within [from, to)', description: 'to defaults to now (plus the allowed future), from to one day before to. Same answer shapes as /v1/query, one sample per series.' })
  @ApiQuery({ name: 'metric', required: true })
  @ApiQuery({ name: 'tag', required: false, isArray: true })
  @ApiQuery({ name: 'match', required: false, isArray: true, description: MATCH_DOC })
  @ApiQuery({ name: 'from', required: false })
  @ApiQuery({ name: 'to', required: false })
  @ApiQuery({ name: 'fields', required: false })
  @ApiQuery({ name: 'format', required: false, enum: ['json', 'msgpack', 'csv', 'ndjson'] })
  @ApiResponse({ status: 200, schema: QUERY_RESULT_SCHEMA })
  async latest(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const parsed = parseLatestParams(req.query, req.headers.accept, this.clock.now(), this.config.limits.maxFutureMs);
    await this.send(parsed.format, fromArray(await this.query.latest(parsed.spec)), parsed.spec.fields, reply);
  }

  @Get('series')
  @ApiOperation({ summary: 'List the series matching a selector that have data in [from, to)' })
  @ApiQuery({ name: 'metric', required: false })
  @ApiQuery({ name: 'tag', required: false, isArray: true })
  @ApiQuery({ name: 'match', required: false, isArray: true, description: MATCH_DOC })
  @ApiQuery({ name: 'from', required: false, description: 'default: 0' })
  @ApiQuery({ name: 'to', required: false, description: 'default: now + 1 day' })
  @ApiResponse({ status: 200, schema: SERIES_LIST_SCHEMA })
  async series(@Query() query: unknown): Promise<unknown> {
    const p = parseOrThrow(seriesParamsSchema, query, 'query');
    const now = this.clock.now();
    return { series: await this.query.series(p.metric, tagsFromParams(p.tag), p.from ?? 0, p.to ?? now + 86_400_000, matchersFromParams(p.match)) };
  }

  private async answer({ spec, format }: ParsedQuery, reply: FastifyReply, compact: boolean): Promise<void> {
    if (isAggregate(spec)) await this.send(format, fromArray(await this.query.aggregate(spec)), undefined, reply);
    else await this.send(format, this.query.query(spec), spec.fields, reply, compact);
  }

  private async send(format: Format, results: AsyncIterable<SeriesResult>, fields: readonly string[] | undefined, reply: FastifyReply, compact = false): Promise<void> {
    const { metrics } = this;
    const started = performance.now();
    const maxPoints = this.config.query.maxPoints;
    // The first series is computed before the status line goes out, so that a failing query
    // still answers with a proper error instead of a truncated 200.
    const it = results[Symbol.asyncIterator]();
    const first = await it.next();
    let points = 0;
    const counted = async function* (): AsyncGenerator<SeriesResult> {
      let r = first;
      while (!r.done) {
        points += pointsOf(r.value);
        if (format === 'json' && points > maxPoints)
          throw new LimitError('S4_MAX_QUERY_POINTS', maxPoints, `a JSON answer would hold more than ${maxPoints} points; use format=msgpack, ndjson or csv, or a smaller range`, 413);
        yield r.value;
        r = await it.next();
      }
    };
    // Any shard may hold series of the selector: shards whose ingest lags are named, in a header
    // (every format) and in the JSON answer, because their latest writes may not be here yet.
    const lagging = this.lag?.lagging() ?? [];
    const warnings: AnswerWarning[] =
      lagging.length > 0 ? [{ code: 'ingest_lag', shards: lagging, message: `recent writes to shards ${lagging.join(',')} may be missing: their Kafka lag is over ${this.lag!.readyLag} messages` }] : [];
    if (lagging.length > 0) void reply.header('s4-lagging-shards', lagging.join(','));
    const stream = Readable.from(encode(format, counted(), fields, warnings, compact), { objectMode: false });
    stream.on('end', () => {
      metrics.queryPoints.inc(points);
      metrics.queryRequests.inc({ outcome: 'ok' });
      metrics.querySeconds.observe({ format }, (performance.now() - started) / 1000);
    });
    stream.on('error', () => metrics.queryRequests.inc({ outcome: 'error' }));
    await reply.status(200).header('content-type', CONTENT_TYPES[format]).send(stream);
  }
}

/** Samples of a result, counted without building the values of one answered from block columns. */
function pointsOf(s: SeriesResult): number {
  if (!s.slices) return s.ts.length;
  let n = 0;
  for (const x of s.slices) n += x.hi - x.lo;
  return n;
}

async function* fromArray<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** Whether the client reads compact node columns: `Accept: application/msgpack; columns=2` (columns-wire.ts). */
function compactColumns(accept: string | undefined): boolean {
  return accept !== undefined && /application\/msgpack\s*;[^,]*\bcolumns=2\b/.test(accept);
}
