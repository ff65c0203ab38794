import { Controller, Get, Header, Inject, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MANIFEST_KEY } from '@s4/core';
import type { Runtime } from '../runtime.js';
import { RUNTIME } from './tokens.js';

@ApiTags('operations')
@Controller()
export class HealthController {
  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiResponse({ status: 200 })
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: the hot tier and the object store both answer' })
  @ApiResponse({ status: 200 })
  @ApiResponse({ status: 503 })
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    const { hot, objects, config } = this.runtime;
    const checks: Record<string, string> = {};
    await Promise.all([
      hot.generation({ ns: config.namespace, shard: 0 }).then(() => (checks.hot = 'ok'), (e: Error) => (checks.hot = e.message)),
      objects.head(MANIFEST_KEY).then(() => (checks.objects = 'ok'), (e: Error) => (checks.objects = e.message)),
    ]);
    const ok = Object.values(checks).every((v) => v === 'ok');
    await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks });
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ summary: 'Prometheus metrics: ingest, flush and query counters and latencies, hot-tier bytes' })
  @ApiResponse({ status: 200 })
  async metrics(): Promise<string> {
    return this.runtime.metrics.registry.metrics();
  }
}
