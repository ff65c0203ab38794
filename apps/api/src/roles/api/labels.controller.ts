import { Controller, Get, Inject, Param, Query } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Clock } from '@s4/core';
import type { QueryEngine, SeriesSelector } from '@s4/engine';
import { CLOCK } from '../../http/tokens.js';
import { ERROR_SCHEMA, LABEL_VALUES_SCHEMA, LABELS_SCHEMA, MATCH_DOC } from './openapi.js';
import { matchersFromParams, parseOrThrow, seriesParamsSchema, tagsFromParams } from './query.schema.js';
import { QUERY_ENGINE } from './tokens.js';

/** Tag keys and tag values of the series with data in a time range, for query builders and the Prometheus API. */
@ApiTags('query')
@Controller('v1/labels')
export class LabelsController {
  constructor(
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(QUERY_ENGINE) private readonly query: QueryEngine,
  ) {}

  @Get()
  @ApiOperation({ summary: 'Tag keys of the series with data in [from, to), sorted', description: 'Optionally only of one metric and of the series a selector matches.' })
  @ApiQuery({ name: 'metric', required: false })
  @ApiQuery({ name: 'tag', required: false, isArray: true, description: 'key:value, repeatable; all must match' })
  @ApiQuery({ name: 'match', required: false, isArray: true, description: MATCH_DOC })
  @ApiQuery({ name: 'from', required: false, description: 'inclusive, integer ms or ISO-8601; default: 0' })
  @ApiQuery({ name: 'to', required: false, description: 'exclusive; default: now + 1 day' })
  @ApiResponse({ status: 200, schema: LABELS_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async labels(@Query() query: unknown): Promise<{ labels: string[] }> {
    return { labels: await this.query.labels(this.selector(query)) };
  }

  @Get(':key/values')
  @ApiOperation({ summary: 'Values of one tag key among the series with data in [from, to), sorted' })
  @ApiParam({ name: 'key', description: 'tag key (URL-encoded)' })
  @ApiQuery({ name: 'metric', required: false })
  @ApiQuery({ name: 'tag', required: false, isArray: true, description: 'key:value, repeatable; all must match' })
  @ApiQuery({ name: 'match', required: false, isArray: true, description: MATCH_DOC })
  @ApiQuery({ name: 'from', required: false, description: 'inclusive, integer ms or ISO-8601; default: 0' })
  @ApiQuery({ name: 'to', required: false, description: 'exclusive; default: now + 1 day' })
  @ApiResponse({ status: 200, schema: LABEL_VALUES_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async values(@Param('key') key: string, @Query() query: unknown): Promise<{ values: string[] }> {
    return { values: await this.query.labelValues(key, this.selector(query)) };
  }

  private selector(query: unknown): SeriesSelector {
    const p = parseOrThrow(seriesParamsSchema, query, 'query');
    return { metric: p.metric, tags: tagsFromParams(p.tag), matchers: matchersFromParams(p.match), from: p.from ?? 0, to: p.to ?? this.clock.now() + 86_400_000 };
  }
}
