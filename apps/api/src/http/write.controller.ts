import { Controller, HttpCode, Inject, Post, Req } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { S4Error } from '@s4/core';
import { parseWrite, type WriteBody } from '@s4/engine';
import type { Runtime } from '../runtime.js';
import { RUNTIME } from './tokens.js';
import { ERROR_SCHEMA, WRITE_BODY_SCHEMA } from './openapi.js';

const WRITE_TYPES = new Set(['application/json', 'application/x-ndjson', 'application/ndjson', 'application/msgpack']);

@ApiTags('write')
@Controller('v1')
export class WriteController {
  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  @Post('write')
  @HttpCode(204)
  @ApiOperation({ summary: 'Write samples', description: 'The whole request is validated first; 204 once every sample is durable in the hot tier. Same series and timestamp again: the last write wins.' })
  @ApiConsumes('application/json', 'application/x-ndjson', 'application/msgpack')
  @ApiBody({ schema: WRITE_BODY_SCHEMA })
  @ApiResponse({ status: 204, description: 'Every sample is durable' })
  @ApiResponse({ status: 400, description: 'Malformed request or limit exceeded; nothing was written', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 413, description: 'Body, sample count or record size over its limit; nothing was written', schema: ERROR_SCHEMA })
  async write(@Req() req: FastifyRequest): Promise<void> {
    const started = performance.now();
    const { runtime } = this;
    try {
      const type = (req.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
      if (!WRITE_TYPES.has(type)) throw new S4Error('unsupported_media_type', `Content-Type ${type || '(none)'} is not accepted; use ${[...WRITE_TYPES].join(', ')}`, 415);
      const body: WriteBody = typeof req.body === 'string' ? { kind: 'ndjson', text: req.body } : { kind: 'json', body: req.body };
      const series = parseWrite(body, runtime.config.limits, runtime.clock.now());
      const result = await runtime.writer.write(series);
      runtime.metrics.ingestSamples.inc(result.samples);
      runtime.metrics.ingestRequests.inc({ outcome: 'ok' });
    } catch (e) {
      runtime.metrics.ingestRequests.inc({ outcome: 'error' });
      throw e;
    } finally {
      runtime.metrics.ingestSeconds.observe((performance.now() - started) / 1000);
    }
  }
}
