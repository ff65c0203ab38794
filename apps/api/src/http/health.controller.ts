import { Controller, Get, Header, Inject, Logger, Res } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { MANIFEST_KEY, UnavailableError, type HotTier, type ObjectStore } from '@s4/core';
import type { Config } from '@s4/config';
import type { Metrics } from '../metrics.js';
import { CONFIG, HOT_TIER, INGEST, METRICS, OBJECT_STORE } from './tokens.js';

/** What /readyz says of an ingest worker (roles/ingest/ingest.root.ts decides). */
export type IngestReadiness = { readonly ready: true; readonly shards: readonly number[] } | { readonly ready: false; readonly reason: string; readonly shards?: readonly number[] };

export interface IngestReadinessSource {
  readiness(): IngestReadiness;
}

/** A readiness probe answers within this, whatever the stores do. */
const CHECK_TIMEOUT_MS = 2_000;

/** What /readyz shows per component: never the error text, which can carry addresses and credentials' names. */
type CheckResult = 'ok' | 'unavailable' | 'timeout' | 'full' | 'throttled' | 'error';

@ApiTags('operations')
@Controller()
export class HealthController {
  private readonly log = new Logger('readyz');
  /** The last result per component, so a failing store is logged when it starts failing, not on every probe. */
  private readonly last = new Map<string, CheckResult>();

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(HOT_TIER) private readonly hot: HotTier,
    @Inject(OBJECT_STORE) private readonly objects: ObjectStore,
    @Inject(METRICS) private readonly prometheus: Metrics,
    @Inject(INGEST) private readonly ingest: IngestReadinessSource | null,
  ) {}

  @Get('healthz')
  @ApiOperation({ summary: 'Liveness: the process answers' })
  @ApiResponse({ status: 200 })
  healthz(): { status: string } {
    return { status: 'ok' };
  }

  @Get('readyz')
  @ApiOperation({ summary: 'Readiness: the hot tier and the object store both answer; an ingest worker also needs its shards\' Kafka lag at most S4_INGEST_READY_LAG' })
  @ApiResponse({ status: 200 })
  @ApiResponse({ status: 503 })
  async readyz(@Res() reply: FastifyReply): Promise<void> {
    const { hot, objects, config } = this;
    const [hotCheck, objectsCheck] = await Promise.all([
      this.check('hot', () => hot.generation({ ns: config.namespace, shard: 0 })),
      this.check('objects', () => objects.head(MANIFEST_KEY)),
    ]);
    const ingest = this.ingest?.readiness();
    const checks = { hot: hotCheck, objects: objectsCheck, ...(ingest ? { ingest: ingest.ready ? 'ok' : 'lagging' } : {}) };
    const ok = hotCheck === 'ok' && objectsCheck === 'ok' && (ingest?.ready ?? true);
    await reply.status(ok ? 200 : 503).send({ status: ok ? 'ready' : 'not ready', checks, ...(ingest ? { ingest } : {}) });
  }

  private async check(component: string, probe: () => Promise<unknown>): Promise<CheckResult> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), CHECK_TIMEOUT_MS)));
    const result = await Promise.race([
      probe().then(
        () => 'ok' as const,
        (e: unknown) => {
          const r = classify(e);
          if (this.last.get(component) !== r) this.log.warn(`${component} is not ready (${r}): ${describe(e)}`);
          return r;
        },
      ),
      timedOut,
    ]);
    clearTimeout(timer);
    if (result === 'timeout' && this.last.get(component) !== 'timeout') this.log.warn(`${component} is not ready: no answer within ${CHECK_TIMEOUT_MS} ms`);
    this.last.set(component, result);
    return result;
  }

  @Get('metrics')
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({ summary: 'Prometheus metrics: ingest, flush and query counters and latencies, hot-tier bytes' })
  @ApiResponse({ status: 200 })
  async metrics(): Promise<string> {
    return this.prometheus.registry.metrics();
  }
}

/** The error and what caused it, for the server log only. */
function describe(e: unknown): string {
  if (!(e instanceof Error)) return String(e);
  return e.cause instanceof Error ? `${e.message} (${e.cause.message})` : e.message;
}

function classify(e: unknown): CheckResult {
  if (!(e instanceof UnavailableError)) return 'error';
  switch (e.reason) {
    case 'timeout':
    case 'full':
    case 'throttled':
      return e.reason;
    default:
      return 'unavailable';
  }
}
