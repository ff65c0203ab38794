import { Controller, Get, Inject, Param, Post, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LimitError, S4Error, UnavailableError, nameMap, own, type Clock, type SeriesKey } from '@s4/core';
import type { Config } from '@s4/config';
import type { QueryEngine } from '@s4/engine';
import { CLOCK, CONFIG } from '../../../http/tokens.js';
import { QUERY_ENGINE } from '../tokens.js';
import { evaluate, selectorsOf, stepTimes, type RawSeries, type StepSeries } from './promql/eval.js';
import { parseDuration, parsePromql, parseSeriesSelector, type SelectorExpr } from './promql/parse.js';
import { compileSelector, labelsOf, selectData, selectKeys, METRIC_LABEL } from './select.js';

/** Prometheus refuses range queries of more than 11,000 steps; so does S4, with the same words. */
const MAX_STEPS = 11_000;

const PROM_RESULT = {
  type: 'object',
  properties: {
    status: { type: 'string', enum: ['success', 'error'] },
    data: { type: 'object', description: 'resultType (vector, matrix, scalar) and result, as Prometheus answers' },
    errorType: { type: 'string' },
    error: { type: 'string' },
  },
};

/**
 * The part of Prometheus' HTTP API that Grafana's Prometheus data source uses: queries (instant
 * and range) in the PromQL subset of promql/parse.ts, series, label names and label values.
 * Parameters come from the query string or an x-www-form-urlencoded body (Grafana POSTs).
 * Answers and errors have Prometheus' shapes ({status, data} / {status, errorType, error}).
 */
@ApiTags('prometheus')
@Controller('api/v1')
export class PromqlController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(QUERY_ENGINE) private readonly engine: QueryEngine,
  ) {}

  @Get('query')
  @ApiOperation({ summary: 'PromQL instant query (S4\'s subset; see docs/protocols.md)', description: 'Also POST with a form body. Unsupported PromQL: 422 naming the construct.' })
  @ApiQuery({ name: 'query', required: true })
  @ApiQuery({ name: 'time', required: false, description: 'RFC 3339 or Unix seconds; default now' })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  @ApiResponse({ status: 400, schema: PROM_RESULT })
  @ApiResponse({ status: 422, description: 'PromQL outside S4\'s subset', schema: PROM_RESULT })
  async query(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => {
      const p = params(req);
      const expr = parsePromql(required(p, 'query'));
      const t = p.has('time') ? time(p.get('time')!, 'time') : this.clock.now();
      const out = await this.run(expr, { start: t, end: t, step: 1 });
      if (expr.kind === 'number') return { resultType: 'scalar', result: [t / 1000, formatValue(expr.value)] };
      return { resultType: 'vector', result: out.filter((s) => s.values[0] !== undefined).map((s) => ({ metric: s.labels, value: [t / 1000, formatValue(s.values[0]!)] })) };
    });
  }

  @Post('query')
  @ApiOperation({ summary: 'PromQL instant query, form body' })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  async queryPost(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.query(req, reply);
  }

  @Get('query_range')
  @ApiOperation({ summary: 'PromQL range query (S4\'s subset)', description: 'Steps start, start+step, … ≤ end; at most 11,000 of them.' })
  @ApiQuery({ name: 'query', required: true })
  @ApiQuery({ name: 'start', required: true })
  @ApiQuery({ name: 'end', required: true })
  @ApiQuery({ name: 'step', required: true, description: 'duration (15s, 1m) or seconds' })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  @ApiResponse({ status: 422, schema: PROM_RESULT })
  async queryRange(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => {
      const p = params(req);
      const expr = parsePromql(required(p, 'query'));
      const start = time(required(p, 'start'), 'start');
      const end = time(required(p, 'end'), 'end');
      const stepText = required(p, 'step');
      const step = parseDuration(stepText);
      if (step === undefined || step <= 0) throw new S4Error('invalid_request', `invalid parameter "step": ${JSON.stringify(stepText)} is not a positive duration`, 400);
      if (end < start) throw new S4Error('invalid_request', 'invalid parameter "end": end timestamp must not be before start time', 400);
      if ((end - start) / step > MAX_STEPS) throw new S4Error('invalid_request', `exceeded maximum resolution of ${MAX_STEPS} points per timeseries. Try decreasing the query resolution (?step=XX)`, 400);
      const steps = { start, end, step };
      const times = stepTimes(steps);
      const out = await this.run(expr, steps);
      return {
        resultType: 'matrix',
        result: out
          .map((s) => ({ metric: s.labels, values: times.flatMap((t, i) => (s.values[i] === undefined ? [] : [[t / 1000, formatValue(s.values[i])]])) }))
          .filter((s) => s.values.length > 0),
      };
    });
  }

  @Post('query_range')
  @ApiOperation({ summary: 'PromQL range query, form body' })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  async queryRangePost(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.queryRange(req, reply);
  }

  @Get('series')
  @ApiOperation({ summary: 'Series matching match[] selectors with data in [start, end]' })
  @ApiQuery({ name: 'match[]', required: true, isArray: true })
  @ApiQuery({ name: 'start', required: false })
  @ApiQuery({ name: 'end', required: false })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  async series(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => {
      const p = params(req);
      if (p.getAll('match[]').length === 0) throw new S4Error('invalid_request', 'no match[] parameter provided', 400);
      return (await this.keys(p)).map((k) => Object.fromEntries(labelsOf(k)));
    });
  }

  @Post('series')
  @ApiOperation({ summary: 'Series, form body' })
  async seriesPost(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.series(req, reply);
  }

  @Get('labels')
  @ApiOperation({ summary: 'Label names (of the series matching match[], if given) with data in [start, end]' })
  @ApiQuery({ name: 'match[]', required: false, isArray: true })
  @ApiQuery({ name: 'start', required: false })
  @ApiQuery({ name: 'end', required: false })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  async labels(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => {
      const names = new Set<string>();
      for (const k of await this.keys(params(req))) for (const [n] of labelsOf(k)) names.add(n);
      return [...names].sort();
    });
  }

  @Post('labels')
  @ApiOperation({ summary: 'Label names, form body' })
  async labelsPost(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await this.labels(req, reply);
  }

  @Get('label/:name/values')
  @ApiOperation({ summary: 'Values of one label (__name__: metric names), of the series matching match[] if given' })
  @ApiParam({ name: 'name' })
  @ApiQuery({ name: 'match[]', required: false, isArray: true })
  @ApiResponse({ status: 200, schema: PROM_RESULT })
  async labelValues(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Param('name') name: string): Promise<void> {
    await this.answer(reply, async () => {
      const values = new Set<string>();
      for (const k of await this.keys(params(req))) {
        const v = name === METRIC_LABEL ? k.metric : own(k.tags, name);
        if (v !== undefined) values.add(v);
      }
      return [...values].sort();
    });
  }

  @Get('metadata')
  @ApiOperation({ summary: 'Metric metadata: S4 keeps none, so always empty' })
  async metadata(@Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => nameMap());
  }

  @Get('status/buildinfo')
  @ApiOperation({ summary: 'Build information, for clients that ask which server this is' })
  async buildinfo(@Res() reply: FastifyReply): Promise<void> {
    await this.answer(reply, async () => ({ version: '0.1.0', revision: 's4', branch: '', buildUser: '', buildDate: '', goVersion: '' }));
  }

  /** The series matching every match[] selector (any of them), or all series, over [start, end]. */
  private async keys(p: URLSearchParams): Promise<SeriesKey[]> {
    const now = this.clock.now();
    const from = p.has('start') ? time(p.get('start')!, 'start') : 0;
    const to = p.has('end') ? time(p.get('end')!, 'end') + 1 : now + 86_400_000;
    const matches = p.getAll('match[]');
    if (matches.length === 0) return this.engine.series(undefined, nameMap(), from, to);
    const found = new Map<string, SeriesKey>();
    for (const m of matches) for (const k of await selectKeys(this.engine, compileSelector(parseSeriesSelector(m)), from, to)) found.set(JSON.stringify(labelsOf(k)), k);
    return [...found.values()];
  }

  private async run(expr: ReturnType<typeof parsePromql>, steps: { start: number; end: number; step: number }): Promise<StepSeries[]> {
    const data = new Map<SelectorExpr, RawSeries[]>();
    const maxPoints = this.config.query.maxPoints;
    let points = 0;
    for (const { sel, range } of selectorsOf(expr)) {
      const from = Math.max(0, steps.start - sel.offset - range);
      const to = steps.end - sel.offset + 1;
      const list: RawSeries[] = [];
      if (to > from)
        for await (const r of selectData(this.engine, compileSelector(sel.matchers), from, to)) {
          const col = r.fields.value ?? [];
          const ts: number[] = [];
          const values: number[] = [];
          for (let i = 0; i < r.ts.length; i++) {
            const v = col[i];
            if (typeof v === 'number') {
              ts.push(r.ts[i]!);
              values.push(v);
            }
          }
          points += ts.length;
          if (points > maxPoints) throw new LimitError('S4_MAX_QUERY_POINTS', maxPoints, `the query would read more than ${maxPoints} samples; query a shorter range`, 422);
          if (ts.length > 0) list.push({ labels: Object.fromEntries(labelsOf(r)), ts, values });
        }
      data.set(sel, list);
    }
    return evaluate(expr, stepTimes(steps), data);
  }

  private async answer(reply: FastifyReply, work: () => Promise<unknown>): Promise<void> {
    try {
      const data = await work();
      await reply.status(200).header('content-type', 'application/json').send(JSON.stringify({ status: 'success', data }));
    } catch (e) {
      if (!(e instanceof S4Error)) throw e;
      if (e instanceof UnavailableError) void reply.header('retry-after', String(e.retryAfterSeconds));
      const errorType = e.status === 422 ? 'execution' : e.status === 503 ? 'unavailable' : e.status >= 500 ? 'internal' : 'bad_data';
      await reply
        .status(e.status)
        .header('content-type', 'application/json')
        .send(JSON.stringify({ status: 'error', errorType, error: e.message, ...(e.details ? { details: e.details } : {}) }));
    }
  }
}

/** Query-string and form-body parameters together (Grafana POSTs forms). */
function params(req: FastifyRequest): URLSearchParams {
  const p = new URLSearchParams(req.url.includes('?') ? req.url.slice(req.url.indexOf('?') + 1) : '');
  if (req.body instanceof URLSearchParams) for (const [k, v] of req.body) p.append(k, v);
  return p;
}

function required(p: URLSearchParams, name: string): string {
  const v = p.get(name);
  if (v === null || v === '') throw new S4Error('invalid_request', `invalid parameter "${name}": missing`, 400);
  return v;
}

/** RFC 3339 or Unix seconds (fractions allowed) → ms. */
function time(text: string, name: string): number {
  if (/^-?\d+(\.\d+)?$/.test(text)) return Math.round(Number(text) * 1000);
  const ms = Date.parse(text);
  if (Number.isNaN(ms) || !/^\d{4}-\d\d-\d\dT/.test(text)) throw new S4Error('invalid_request', `invalid parameter "${name}": cannot parse ${JSON.stringify(text)} to a valid timestamp`, 400);
  return ms;
}

/** Sample values as Prometheus writes them (Go's FormatFloat 'f', -1): no exponent, NaN, +Inf, -Inf. */
export function formatValue(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (v === Infinity) return '+Inf';
  if (v === -Infinity) return '-Inf';
  const s = String(v);
  if (!s.includes('e')) return s;
  const [mantissa, exp] = s.split('e') as [string, string];
  const e = Number(exp);
  const negative = mantissa.startsWith('-');
  const digits = mantissa.replace('-', '').replace('.', '');
  const point = mantissa.replace('-', '').indexOf('.') < 0 ? mantissa.replace('-', '').length : mantissa.replace('-', '').indexOf('.');
  const at = point + e;
  const body = at <= 0 ? `0.${'0'.repeat(-at)}${digits}` : at >= digits.length ? digits + '0'.repeat(at - digits.length) : `${digits.slice(0, at)}.${digits.slice(at)}`;
  return negative ? `-${body}` : body;
}
