import { Controller, HttpCode, Inject, Post } from '@nestjs/common';
import { ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import { allShards } from '@s4/core';
import { rebuildCatalogs, type FlushStats, type RollupStats } from '@s4/engine';
import type { Runtime } from '../runtime.js';
import { FLUSH_RESULT_SCHEMA, ROLLUP_RESULT_SCHEMA } from './openapi.js';
import { RUNTIME } from './tokens.js';

@ApiTags('admin')
@Controller('v1/admin')
export class AdminController {
  constructor(@Inject(RUNTIME) private readonly runtime: Runtime) {}

  @Post('flush')
  @HttpCode(200)
  @ApiOperation({ summary: 'Flush every closed hour window to the object store now (ignores the grace period)' })
  @ApiResponse({ status: 200, description: 'What this flush wrote', schema: FLUSH_RESULT_SCHEMA })
  async flush(): Promise<FlushStats> {
    const started = performance.now();
    const stats = await this.runtime.flusher.flushAll(this.runtime.clock.now());
    this.runtime.metrics.recordFlush(stats, performance.now() - started);
    return stats;
  }

  @Post('rollup')
  @HttpCode(200)
  @ApiOperation({ summary: 'Compute every missing or stale rollup now (all days; the worker only looks back S4_ROLLUP_LOOKBACK_MS)' })
  @ApiResponse({ status: 200, description: 'Rollup objects written, series covered, windows checked', schema: ROLLUP_RESULT_SCHEMA })
  async rollup(): Promise<RollupStats> {
    const stats = await this.runtime.rollups.rollupAll(0, this.runtime.clock.now() + 86_400_000);
    this.runtime.metrics.recordRollup(stats);
    return stats;
  }

  @Post('rebuild-catalog')
  @HttpCode(200)
  @ApiOperation({ summary: 'Rebuild every catalog from the segment objects (LIST + footers), after a catalog was lost' })
  @ApiResponse({ status: 200, description: 'How many parts were registered', schema: { type: 'object', properties: { parts: { type: 'integer' } } } })
  async rebuild(): Promise<{ parts: number }> {
    const { runtime } = this;
    let parts = 0;
    for (const shard of allShards(runtime.config.shards))
      parts += await rebuildCatalogs(runtime.objects, runtime.catalogs, { ns: runtime.config.namespace, shard }, runtime.clock.now());
    return { parts };
  }
}
