import { Controller, Get, Inject, Query, Res } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { LimitError, S4Error, nameMap, type Clock, type SeriesKey } from '@s4/core';
import type { Config } from '@s4/config';
import type { QueryEngine } from '@s4/engine';
import { graphiteGlob } from '@s4/format';
import { CLOCK, CONFIG } from '../../../http/tokens.js';
import { ERROR_SCHEMA } from '../openapi.js';
import { QUERY_ENGINE } from '../tokens.js';

const UNITS = new Map<string, number>([
  ['s', 1000],
  ['sec', 1000],
  ['second', 1000],
  ['seconds', 1000],
  ['min', 60_000],
  ['minute', 60_000],
  ['minutes', 60_000],
  ['h', 3_600_000],
  ['hour', 3_600_000],
  ['hours', 3_600_000],
  ['d', 86_400_000],
  ['day', 86_400_000],
  ['days', 86_400_000],
  ['w', 7 * 86_400_000],
  ['week', 7 * 86_400_000],
  ['weeks', 7 * 86_400_000],
  ['mon', 30 * 86_400_000],
  ['month', 30 * 86_400_000],
  ['months', 30 * 86_400_000],
  ['y', 365 * 86_400_000],
  ['year', 365 * 86_400_000],
  ['years', 365 * 86_400_000],
]);

/**
 * Graphite's render API for plain series: `target` is a metric path, Graphite's globs allowed
 * (`servers.*.cpu`, `{a,b}`, `[0-9]`); every series whose metric matches is returned (tagged
 * series are named `path;k=v`), its `value` field as datapoints. `maxDataPoints` becomes S4's
 * pixel-faithful reduction (first, last, min and max per pixel column), so a dashboard gets the
 * line's true shape rather than Graphite's averaged one. Graphite functions are refused (400).
 */
@ApiTags('graphite')
@Controller()
export class GraphiteController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(QUERY_ENGINE) private readonly engine: QueryEngine,
  ) {}

  @Get('render')
  @ApiOperation({ summary: 'Graphite render API, format=json, plain series (globs allowed)' })
  @ApiQuery({ name: 'target', required: true, isArray: true, description: 'a metric path; * ? [..] {a,b} globs within a node' })
  @ApiQuery({ name: 'from', required: false, description: '-1h, -30min, -2d, now, or Unix seconds (default -24h)' })
  @ApiQuery({ name: 'until', required: false, description: 'as from (default now)' })
  @ApiQuery({ name: 'format', required: false, enum: ['json'] })
  @ApiQuery({ name: 'maxDataPoints', required: false, description: 'at most this many points per series (pixel-faithful reduction; >= 4)' })
  @ApiResponse({ status: 200, description: '[{"target", "tags", "datapoints": [[value, unixSeconds], ...]}]' })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async render(
    @Res() reply: FastifyReply,
    @Query('target') target?: string | string[],
    @Query('from') fromText?: string,
    @Query('until') untilText?: string,
    @Query('format') format?: string,
    @Query('maxDataPoints') maxText?: string,
  ): Promise<void> {
    const targets = target === undefined ? [] : Array.isArray(target) ? target : [target];
    if (targets.length === 0) throw new S4Error('invalid_request', 'target is required', 400);
    if (format !== undefined && format !== 'json') throw new S4Error('invalid_request', `format ${JSON.stringify(format)} is not supported; use format=json`, 400);
    const now = this.clock.now();
    const from = graphiteTime(fromText ?? '-24h', now, 'from');
    const to = graphiteTime(untilText ?? 'now', now, 'until') + 1;
    if (to <= from) throw new S4Error('invalid_request', 'until must be after from', 400);
    let maxPoints: number | undefined;
    if (maxText !== undefined) {
      maxPoints = Number(maxText);
      if (!Number.isInteger(maxPoints) || maxPoints < 4) throw new S4Error('invalid_request', `maxDataPoints must be an integer >= 4, got ${JSON.stringify(maxText)}`, 400);
    }
    const out: { target: string; tags: Record<string, string>; datapoints: [number | null, number][] }[] = [];
    let points = 0;
    for (const t of targets) {
      if (/[()]/.test(t)) throw new S4Error('invalid_request', `Graphite functions are not supported (target ${JSON.stringify(t)}); give a metric path`, 400);
      const metrics = /[*?[{]/.test(t) ? await this.metricsMatching(t, from, to) : [t];
      for (const metric of metrics)
        for await (const r of this.engine.query({ metric, tags: nameMap(), from, to, fields: ['value'], maxPoints })) {
          const col = r.fields.value ?? [];
          const datapoints = r.ts.map((ts, i): [number | null, number] => [typeof col[i] === 'number' && Number.isFinite(col[i]) ? (col[i]) : null, Math.floor(ts / 1000)]);
          points += datapoints.length;
          if (points > this.config.query.maxPoints) throw new LimitError('S4_MAX_QUERY_POINTS', this.config.query.maxPoints, 'the answer would hold too many points; give maxDataPoints or a shorter range', 413);
          out.push({ target: seriesName(r), tags: { ...r.tags, name: r.metric }, datapoints });
        }
    }
    await reply.status(200).header('content-type', 'application/json').send(JSON.stringify(out));
  }

  @Get('metrics/find')
  @ApiOperation({ summary: 'Graphite metric tree: the nodes matching a path pattern (Grafana\'s Graphite query editor)' })
  @ApiQuery({ name: 'query', required: true, description: 'a path pattern, e.g. servers.* (globs within a node)' })
  @ApiQuery({ name: 'from', required: false })
  @ApiQuery({ name: 'until', required: false })
  @ApiResponse({ status: 200, description: '[{"text","id","leaf":0|1,"expandable":0|1,"allowChildren":0|1}]' })
  async find(@Query('query') query?: string, @Query('from') fromText?: string, @Query('until') untilText?: string): Promise<unknown> {
    if (!query) throw new S4Error('invalid_request', 'query is required', 400);
    const now = this.clock.now();
    const from = graphiteTime(fromText ?? '-24h', now, 'from');
    const to = graphiteTime(untilText ?? 'now', now, 'until') + 1;
    const depth = query.split('.').length;
    const re = graphiteGlob(query);
    const nodes = new Map<string, { leaf: boolean; branch: boolean }>();
    for (const k of await this.engine.series(undefined, nameMap(), from, to)) {
      const parts = k.metric.split('.');
      if (parts.length < depth) continue;
      const id = parts.slice(0, depth).join('.');
      if (!re.test(id)) continue;
      const node = nodes.get(id) ?? { leaf: false, branch: false };
      if (parts.length === depth) node.leaf = true;
      else node.branch = true;
      nodes.set(id, node);
    }
    return [...nodes]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flatMap(([id, n]) => [
        ...(n.branch ? [{ text: id.split('.').at(-1), id, leaf: 0, expandable: 1, allowChildren: 1 }] : []),
        ...(n.leaf ? [{ text: id.split('.').at(-1), id, leaf: 1, expandable: 0, allowChildren: 0 }] : []),
      ]);
  }

  private async metricsMatching(pattern: string, from: number, to: number): Promise<string[]> {
    const re = graphiteGlob(pattern);
    const keys: SeriesKey[] = await this.engine.series(undefined, nameMap(), from, to);
    return [...new Set(keys.map((k) => k.metric).filter((m) => re.test(m)))].sort();
  }
}

/** `path;k=v;...` (tags sorted), Graphite's name of a tagged series. */
function seriesName(key: SeriesKey): string {
  return key.metric + Object.entries(key.tags).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, v]) => `;${k}=${v}`).join('');
}

/** Graphite's from/until: now, -<n><unit>, or Unix seconds → ms. */
function graphiteTime(text: string, now: number, name: string): number {
  if (text === 'now') return now;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const m = /^-(\d+)([a-z]+)$/.exec(text);
  const unit = m ? UNITS.get(m[2]!) : undefined;
  if (!m || unit === undefined) throw new S4Error('invalid_request', `${name}=${JSON.stringify(text)} is not now, -<n><unit> (s, min, h, d, w, mon, y) or Unix seconds`, 400);
  return now - Number(m[1]) * unit;
}
