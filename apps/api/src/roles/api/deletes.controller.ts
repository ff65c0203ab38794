import { randomUUID } from 'node:crypto';
import { Controller, Delete, HttpCode, Inject, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Clock } from '@s4/core';
import type { Tombstone, TombstoneStore } from '@s4/engine';
import { z } from 'zod';
import { CLOCK } from '../../http/tokens.js';
import type { PolicyWatcher } from '../../namespaces/policy-watcher.js';
import { ERROR_SCHEMA, TOMBSTONE_SCHEMA } from './openapi.js';
import { parseOrThrow, tagPair, tagsFromParams, time } from './query.schema.js';
import { POLICIES, TOMBSTONES } from './tokens.js';

const deleteParams = z
  .strictObject({
    metric: z.string().min(1, 'metric is required'),
    tag: z.union([tagPair, z.array(tagPair)]).optional(),
    from: time.optional(),
    to: time.optional(),
  })
  .refine((p) => p.from === undefined || p.to === undefined || p.from < p.to, { message: 'from must be before to', path: ['to'] });

/** Deletes: tombstones every query honours at once; the compactor rewrites the parts they touch. */
@ApiTags('admin')
@Controller('v1')
export class DeletesController {
  constructor(
    @Inject(TOMBSTONES) private readonly tombstones: TombstoneStore,
    @Inject(POLICIES) private readonly policies: PolicyWatcher,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Delete('series')
  @HttpCode(200)
  @ApiOperation({ summary: 'Delete the samples of the matching series in [from, to) (all time without them); admin key only. Hidden from every query (raw, rollups, latest, series listing) once this answers.' })
  @ApiQuery({ name: 'metric', required: true })
  @ApiQuery({ name: 'tag', required: false, isArray: true, description: 'key:value, repeatable; only series with all of them' })
  @ApiQuery({ name: 'from', required: false, description: 'inclusive; integer ms or ISO-8601' })
  @ApiQuery({ name: 'to', required: false, description: 'exclusive; integer ms or ISO-8601' })
  @ApiResponse({ status: 200, description: 'The tombstone stored', schema: TOMBSTONE_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async remove(@Query() params: unknown): Promise<Tombstone & { namespace: string }> {
    const p = parseOrThrow(deleteParams, params, 'query');
    const ns = this.policies.current().resolve(p.metric).name;
    const t: Tombstone = {
      id: randomUUID(),
      metric: p.metric,
      tags: tagsFromParams(p.tag),
      from: p.from ?? Number.MIN_SAFE_INTEGER,
      to: p.to ?? Number.MAX_SAFE_INTEGER,
      createdAt: this.clock.now(),
    };
    await this.tombstones.add(ns, t);
    return { ...t, tags: { ...t.tags }, namespace: ns };
  }
}
