import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S4Error, type Clock } from '@s4/core';
import type { Config } from '@s4/config';
import { parseWrite, type WriteBody, type Writer } from '@s4/engine';
import { CLOCK, CONFIG, METRICS } from '../../http/tokens.js';
import type { Metrics } from '../../metrics.js';
import { WRITER } from './tokens.js';
import { ERROR_SCHEMA, WRITE_BODY_SCHEMA } from './openapi.js';

const WRITE_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'application/msgpack']);

@ApiTags('write')
@Controller('v1')
export class WriteController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(WRITER) private readonly writer: Writer,
    @Inject(METRICS) private readonly metrics: Metrics,
  ) {}

  @Post('write')
  @ApiOperation({
    summary: 'Write samples',
    description:
      'The whole request is validated first; 204 once every sample is durable in the hot tier, or with S4_INGEST=kafka 202 once Kafka acknowledged it (all in-sync replicas) and the ingest role will write it. Same series and timestamp again: the last write wins.',
  })
  @ApiConsumes('application/json', 'application/x-ndjson', 'application/msgpack')
  @ApiBody({ schema: WRITE_BODY_SCHEMA })
  @ApiResponse({ status: 204, description: 'Every sample is durable in the hot tier' })
  @ApiResponse({ status: 202, description: 'S4_INGEST=kafka: every sample is durable in Kafka; queryable once the ingest role wrote it (see the lag in GET /v1/admin/shards)' })
  @ApiResponse({ status: 503, description: 'A store (hot tier, or Kafka in kafka mode) did not answer in time; retry after Retry-After seconds', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 400, description: 'Malformed request or limit exceeded; nothing was written', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 413, description: 'Body, sample count or record size over its limit; nothing was written', schema: ERROR_SCHEMA })
  async write(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const started = performance.now();
    const { metrics } = this;
    try {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!WRITE_TYPES.has(type)) throw new S4Error('unsupported_media_type', `Content-Type ${type || '(none)'} is not accepted; use ${[...WRITE_TYPES].join(', ')}`, 415);
      const body: WriteBody = typeof req.body === 'string' ? { kind: 'ndjson', text: req.body } : { kind: 'json', body: req.body };
      const series = parseWrite(body, this.config.limits, this.clock.now());
      // The one write seam: direct appends to the hot tier, or with S4_INGEST=kafka a produce to
      // the shard's partition (the Writer holds the ingest log), answered 202.
      const result = await this.writer.write(series);
      metrics.ingestSamples.inc(result.samples);
      metrics.ingestRequests.inc({ outcome: 'ok' });
      await reply.status(result.queued ? 202 : 204).send();
    } catch (e) {
      metrics.ingestRequests.inc({ outcome: 'error' });
      throw e;
    } finally {
      metrics.ingestSeconds.observe((performance.now() - started) / 1000);
    }
  }
}
