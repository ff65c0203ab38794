import { Controller, Get, Inject, Query } from '@nestjs/common';
import { ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import { ACTIVE_SERIES_MS, DAY_MS, KEY_FOLDERS, S4Error, namespacePrefix, own, type CardinalityStore, type Clock, type MetricUsage, type ObjectStore } from '@s4/core';
import type { Admission, QueryEngine } from '@s4/engine';
import { z } from 'zod';
import { CLOCK } from '../../http/tokens.js';
import type { PolicyWatcher } from '../../namespaces/policy-watcher.js';
import { CARDINALITY_SCHEMA, ERROR_SCHEMA, NAMESPACES_SCHEMA, TOP_SCHEMA, USAGE_SCHEMA } from './openapi.js';
import { parseOrThrow, tagPair, tagsFromParams, time } from './query.schema.js';
import { ADMISSION, CARDINALITY, OBJECTS, POLICIES, QUERY_ENGINE } from './tokens.js';
import { REQUESTS } from '../../stores.js';

const topParams = z.strictObject({
  by: z.enum(['series', 'samples']).default('series'),
  limit: z.coerce.number().int().min(1).max(10_000).default(20),
  namespace: z.string().min(1).optional(),
});

const cardinalityParams = z.strictObject({
  metric: z.string().min(1, 'metric is required'),
  tag: z.union([tagPair, z.array(tagPair)]).optional(),
  from: time.optional(),
  to: time.optional(),
  limit: z.coerce.number().int().min(1).max(1_000).default(10),
});

const usageParams = z.strictObject({ namespace: z.string().min(1).optional() });

const round = (dollars: number) => Math.round(dollars * 1e6) / 1e6;

/** Bytes and count of a namespace's objects, by folder (a LIST: admin only, never on the query path). */
async function objectsOf(objects: ObjectStore, ns: string): Promise<{ bytes: number; count: number; byFolder: Record<string, { bytes: number; count: number }> }> {
  const prefix = namespacePrefix(ns);
  const folders = new Set<string>(Object.values(KEY_FOLDERS));
  const byFolder = new Map<string, { bytes: number; count: number }>();
  let bytes = 0;
  let count = 0;
  for await (const o of objects.list(prefix)) {
    const first = o.key.slice(prefix.length).split('/')[0]!;
    const folder = folders.has(first) ? first : 'other';
    const f = byFolder.get(folder) ?? { bytes: 0, count: 0 };
    f.bytes += o.size;
    f.count++;
    byFolder.set(folder, f);
    bytes += o.size;
    count++;
  }
  return { bytes, count, byFolder: Object.fromEntries([...byFolder].sort(([a], [b]) => (a < b ? -1 : 1))) };
}

/** This process's requests not yet in the shared counters (the LIST just made included). */
async function flushRequests(store: CardinalityStore, now: number): Promise<void> {
  await Promise.all(REQUESTS.take().map(([ns, r]) => store.addRequests(ns, r.put, r.get, now)));
}

export interface TopRow extends MetricUsage {
  readonly namespace: string;
}

/** The namespace policies in force, and what each namespace and metric writes (cardinality). */
@ApiTags('namespaces')
@Controller('v1')
export class NamespacesController {
  constructor(
    @Inject(POLICIES) private readonly policies: PolicyWatcher,
    @Inject(CARDINALITY) private readonly cardinality: CardinalityStore,
    @Inject(ADMISSION) private readonly admission: Admission,
    @Inject(QUERY_ENGINE) private readonly query: QueryEngine,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(OBJECTS) private readonly objects: ObjectStore,
  ) {}

  @Get('admin/usage')
  @ApiOperation({
    summary: "What a namespace costs: its objects' bytes and count (a LIST now), its PUT- and GET-priced requests over the last day, and the list-price dollars they imply (prices from the policy file, default S3 Standard)",
  })
  @ApiQuery({ name: 'namespace', required: false, description: 'one namespace (default: all)' })
  @ApiResponse({ status: 200, schema: USAGE_SCHEMA })
  @ApiResponse({ status: 404, schema: ERROR_SCHEMA })
  async usage(@Query() params: unknown): Promise<unknown> {
    const { namespace } = parseOrThrow(usageParams, params, 'query');
    const set = this.policies.current();
    if (namespace !== undefined && !set.get(namespace)) throw new UnknownNamespace(namespace);
    const names = namespace === undefined ? set.all.map((n) => n.name) : [namespace];
    const prices = set.policies.prices;
    const now = this.clock.now();
    // This process's counts of the last second join the shared ones first.
    await this.admission.flushCounts(now);
    const out = [];
    for (const ns of names) {
      const objects = await objectsOf(this.objects, ns);
      await flushRequests(this.cardinality, now);
      const requests = await this.cardinality.requests(ns, now);
      const storageMonth = (objects.bytes / 2 ** 30) * prices.storageGbMonth;
      const requestsDay = (requests.put / 1000) * prices.putPer1000 + (requests.get / 1000) * prices.getPer1000;
      out.push({
        namespace: ns,
        objects,
        requestsLastDay: requests,
        dollars: { storagePerMonth: round(storageMonth), requestsLastDay: round(requestsDay), perMonthAtThisRate: round(storageMonth + 30 * requestsDay) },
      });
    }
    return { prices, namespaces: out };
  }

  @Get('namespaces')
  @ApiOperation({ summary: 'The namespace policies in force (S4_NAMESPACES_FILE, reloaded when it changes); durations in ms, null: forever/unlimited' })
  @ApiResponse({ status: 200, schema: NAMESPACES_SCHEMA })
  namespaces(): unknown {
    const p = this.policies.current().policies;
    return {
      defaultNamespace: p.defaultNamespace,
      prices: p.prices,
      namespaces: p.namespaces.map((n) => ({ ...n, limits: { ...n.limits, maxActiveSeries: n.limits.maxActiveSeries ?? null, maxNewSeriesPerMinute: n.limits.maxNewSeriesPerMinute ?? null, maxSamplesPerSecond: n.limits.maxSamplesPerSecond ?? null }, backfillMs: n.backfillMs === Number.MAX_SAFE_INTEGER ? null : n.backfillMs })),
    };
  }

  @Get('admin/top')
  @ApiOperation({ summary: 'Metrics with the most active series (written within the last hour) or the most samples written, per namespace and overall' })
  @ApiQuery({ name: 'by', required: false, enum: ['series', 'samples'], description: 'series: active series; samples: samples written in the last hour (then the last day)' })
  @ApiQuery({ name: 'limit', required: false, description: 'rows (default 20)' })
  @ApiQuery({ name: 'namespace', required: false, description: 'one namespace (default: all)' })
  @ApiResponse({ status: 200, schema: TOP_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async top(@Query() params: unknown): Promise<unknown> {
    const { by, limit, namespace } = parseOrThrow(topParams, params, 'query');
    const set = this.policies.current();
    const names = namespace === undefined ? set.all.map((n) => n.name) : [namespace];
    if (namespace !== undefined && !set.get(namespace)) throw new UnknownNamespace(namespace);
    const now = this.clock.now();
    // This process's counts of the last second join the shared ones first.
    await this.admission.flushCounts(now);
    const rows: TopRow[] = [];
    const totals = [];
    for (const ns of names) {
      const usage = await this.cardinality.usage(ns, ACTIVE_SERIES_MS, now);
      totals.push({ namespace: ns, activeSeries: sum(usage, 'activeSeries'), samplesHour: sum(usage, 'samplesHour'), samplesDay: sum(usage, 'samplesDay') });
      for (const u of usage) rows.push({ namespace: ns, ...u });
    }
    const order = by === 'series' ? (a: TopRow, b: TopRow) => b.activeSeries - a.activeSeries || b.samplesHour - a.samplesHour : (a: TopRow, b: TopRow) => b.samplesHour - a.samplesHour || b.samplesDay - a.samplesDay;
    rows.sort((a, b) => order(a, b) || (a.namespace + a.metric < b.namespace + b.metric ? -1 : 1));
    return { by, namespaces: totals, metrics: rows.slice(0, limit) };
  }

  @Get('admin/cardinality')
  @ApiOperation({ summary: "A metric's tag keys by distinct values, over the series with data in [from, to) (default: the last day)" })
  @ApiQuery({ name: 'metric', required: true })
  @ApiQuery({ name: 'tag', required: false, isArray: true, description: 'key:value, repeatable: only series with these tags' })
  @ApiQuery({ name: 'from', required: false })
  @ApiQuery({ name: 'to', required: false })
  @ApiQuery({ name: 'limit', required: false, description: 'most frequent values listed per key (default 10)' })
  @ApiResponse({ status: 200, schema: CARDINALITY_SCHEMA })
  @ApiResponse({ status: 400, schema: ERROR_SCHEMA })
  async tagCardinality(@Query() params: unknown): Promise<unknown> {
    const p = parseOrThrow(cardinalityParams, params, 'query');
    const now = this.clock.now();
    const to = p.to ?? now + 1;
    const from = p.from ?? to - DAY_MS;
    const series = await this.query.series(p.metric, tagsFromParams(p.tag), from, to);
    const byKey = new Map<string, Map<string, number>>();
    for (const s of series)
      for (const k of Object.keys(s.tags)) {
        let values = byKey.get(k);
        if (!values) byKey.set(k, (values = new Map()));
        const v = own(s.tags, k)!;
        values.set(v, (values.get(v) ?? 0) + 1);
      }
    const tags = [...byKey]
      .map(([key, values]) => ({
        key,
        values: values.size,
        top: [...values].sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1)).slice(0, p.limit).map(([value, n]) => ({ value, series: n })),
      }))
      .sort((a, b) => b.values - a.values || (a.key < b.key ? -1 : 1));
    return { metric: p.metric, namespace: this.policies.current().resolve(p.metric).name, from, to, series: series.length, tags };
  }
}

function sum(usage: readonly MetricUsage[], k: 'activeSeries' | 'samplesHour' | 'samplesDay'): number {
  return usage.reduce((n, u) => n + u[k], 0);
}

class UnknownNamespace extends S4Error {
  constructor(ns: string) {
    super('not_found', `namespace ${ns} is not among the namespaces in force (GET /v1/namespaces)`, 404, { namespace: ns });
  }
}
