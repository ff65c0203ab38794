import { Controller, Get, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { allShards, type Clock } from '@s4/core';
import type { Config } from '@s4/config';
import type { CompactStats, FlushStats, HealthReader, RollupStats, ShardHealth } from '@s4/engine';
import { CLOCK, CONFIG, INGEST_LAG } from '../../http/tokens.js';
import type { IngestLagMonitor } from '../ingest/lag.js';
import type { WorkerPasses } from '../threads/passes.js';
import { COMPACT_RESULT_SCHEMA, FLUSH_RESULT_SCHEMA, ROLLUP_RESULT_SCHEMA, SHARDS_SCHEMA } from './openapi.js';
import { HEALTH_READER, WORKER_PASSES } from './tokens.js';

export interface ShardsAnswer {
  readonly now: number;
  readonly lookbackMs: number;
  readonly ingest: 'direct' | 'kafka';
  readonly readyLag: number | null;
  readonly lagReadAt: string | null;
  /** The engine's view of each shard (hot tier, flush, compaction, rollups) with its ingest lag beside it. */
  readonly shards: (ShardHealth & { lag: number | null; lagging: boolean })[];
}

/** Admin passes run in the segment, aggregate and compact worker threads, never on the HTTP thread. */
@ApiTags('admin')
@Controller('v1/admin')
export class AdminController {
  constructor(
    @Inject(WORKER_PASSES) private readonly passes: WorkerPasses,
    @Inject(CONFIG) private readonly config: Config,
    @Inject(INGEST_LAG) private readonly lag: IngestLagMonitor | null,
    @Inject(HEALTH_READER) private readonly health: HealthReader,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get('shards')
  @ApiOperation({
    summary:
      'Every shard of the namespace: unflushed hot-tier bytes and windows, flush lag and the last part registered, parts per window (compaction debt), rollup freshness, and its ingest lag (S4_INGEST=kafka: messages in its Kafka partition not yet in the hot tier)',
  })
  @ApiResponse({ status: 200, description: 'One object per shard; read on the HTTP thread from the hot tier, the catalogs and the ingest lag monitor', schema: SHARDS_SCHEMA })
  async shards(): Promise<ShardsAnswer> {
    const { lag, config } = this;
    const now = this.clock.now();
    // An old snapshot (Kafka was unreachable) is read again now; still failing, the old one is shown with its time.
    const [snap, health] = await Promise.all([lag ? (lag.fresh() ?? lag.read()) : null, this.health.shards()]);
    const byShard = new Map(health.map((h) => [h.shard, h]));
    return {
      now,
      lookbackMs: this.health.lookbackMs,
      ingest: config.ingest.mode,
      readyLag: lag ? lag.readyLag : null,
      lagReadAt: snap ? new Date(snap.at).toISOString() : null,
      shards: allShards(config.shards).map((shard) => {
        const l = snap?.shards.get(shard) ?? null;
        return { ...byShard.get(shard)!, shard, lag: l, lagging: l !== null && lag !== null && l > lag.readyLag };
      }),
    };
  }

  @Post('flush')
  @HttpCode(200)
  @ApiOperation({ summary: 'Flush every closed hour window to the object store now (ignores the grace period)' })
  @ApiResponse({ status: 200, description: 'What this flush wrote', schema: FLUSH_RESULT_SCHEMA })
  flush(): Promise<FlushStats> {
    return this.passes.flush();
  }

  @Post('rollup')
  @HttpCode(200)
  @ApiOperation({ summary: 'Compute every missing or stale rollup now (all days; the worker only looks back S4_ROLLUP_LOOKBACK_MS)' })
  @ApiResponse({ status: 200, description: 'Rollup objects written, series covered, windows checked', schema: ROLLUP_RESULT_SCHEMA })
  rollup(): Promise<RollupStats> {
    return this.passes.rollup();
  }

  @Post('compact')
  @HttpCode(200)
  @ApiOperation({ summary: 'Fold every window with at least S4_COMPACT_MIN_PARTS parts that ended S4_COMPACT_SETTLE_MS ago into one part, and delete parts earlier folds replaced once their grace has passed' })
  @ApiResponse({ status: 200, description: 'Windows folded, parts and bytes in and out, parts deleted', schema: COMPACT_RESULT_SCHEMA })
  compact(): Promise<CompactStats> {
    return this.passes.compact();
  }

  @Post('rebuild-catalog')
  @HttpCode(200)
  @ApiOperation({ summary: 'Rebuild every catalog from the segment objects (LIST + footers), after a catalog was lost' })
  @ApiResponse({ status: 200, description: 'How many parts were registered', schema: { type: 'object', properties: { parts: { type: 'integer' } } } })
  rebuild(): Promise<{ parts: number }> {
    return this.passes.rebuildCatalog();
  }
}
