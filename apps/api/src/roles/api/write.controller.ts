import { Controller, Inject, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S4Error } from '@s4/core';
import type { WriteBody } from '@s4/engine';
import { Ingest } from './ingest.js';
import { ERROR_SCHEMA, WRITE_BODY_SCHEMA } from './openapi.js';

const WRITE_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'application/msgpack']);

@ApiTags('write')
@Controller('v1')
export class WriteController {
  constructor(@Inject(Ingest) private readonly ingest: Ingest) {}

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
  @ApiResponse({ status: 429, description: 'A namespace limit (new series beyond maxActiveSeries or maxNewSeriesPerMinute, maxSamplesPerSecond) refused the request; nothing was written', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 413, description: 'Body, sample count or record size over its limit; nothing was written', schema: ERROR_SCHEMA })
  async write(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
    if (!WRITE_TYPES.has(type)) throw new S4Error('unsupported_media_type', `Content-Type ${type || '(none)'} is not accepted; use ${[...WRITE_TYPES].join(', ')}`, 415);
    const body: WriteBody = typeof req.body === 'string' ? { kind: 'ndjson', text: req.body } : { kind: 'json', body: req.body };
    // Ingest lets go of the parsed body once it is checked (so that it dies young while the write
    // waits for durability); the request must not hold it either.
    req.body = undefined;
    const result = await this.ingest.write(body);
    await reply.status(result.queued ? 202 : 204).send();
  }
}
