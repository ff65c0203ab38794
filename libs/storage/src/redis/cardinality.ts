import type { Cluster, Redis } from 'ioredis';
import { MINUTE_MS, type AdmitLimits, type AdmitResult, type CardinalityLimit, type CardinalityStore, type MetricUsage, type SeriesRef } from '@s4/core';

const HOUR_MS = 3_600_000;

/**
 * Keys of a namespace (P = `s4c:{<ns>}:`, one hash tag so that a script may touch all of them on
 * Redis Cluster and MemoryDB):
 *   P..'series'            ZSET  series id -> last written (ms)
 *   P..'m:'..metric        ZSET  series id of that metric -> last written (ms)
 *   P..'metrics'           SET   metric names with series
 *   P..'new:'..minute      INT   series first seen in that minute (expires after 2 min)
 *   P..'sm:'..minute       HASH  metric -> samples written in that minute (expires after 2 h)
 *   P..'sh:'..hour         HASH  metric -> samples written in that hour (expires after 25 h)
 *   P..'rq:'..hour         HASH  put, get -> object-store requests in that hour (expires after 25 h)
 *
 * ADMIT: ARGV now, activeMs, maxActive (-1: none), maxNew (-1: none), n, then n × (metric, id).
 * Returns {'', fresh} when every series is recorded, else {limit, metric, max} and records none.
 */
export const ADMIT = `
local p = KEYS[1]
local now, activeMs, maxActive, maxNew, n = tonumber(ARGV[1]), tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4]), tonumber(ARGV[5])
local all = p .. 'series'
redis.call('ZREMRANGEBYSCORE', all, '-inf', now - activeMs)
local active = redis.call('ZCARD', all)
local newKey = p .. 'new:' .. math.floor(now / 60000)
local newNow = tonumber(redis.call('GET', newKey) or '0')
local fresh = 0
for i = 0, n - 1 do
  local metric, id = ARGV[6 + i * 2], ARGV[7 + i * 2]
  if not redis.call('ZSCORE', all, id) then
    if maxActive >= 0 and active + fresh >= maxActive then return {'maxActiveSeries', metric, maxActive} end
    if maxNew >= 0 and newNow + fresh >= maxNew then return {'maxNewSeriesPerMinute', metric, maxNew} end
    fresh = fresh + 1
  end
end
local touched = {}
for i = 0, n - 1 do
  local metric, id = ARGV[6 + i * 2], ARGV[7 + i * 2]
  redis.call('ZADD', all, now, id)
  redis.call('ZADD', p .. 'm:' .. metric, now, id)
  if not touched[metric] then
    touched[metric] = true
    redis.call('SADD', p .. 'metrics', metric)
    redis.call('ZREMRANGEBYSCORE', p .. 'm:' .. metric, '-inf', now - activeMs)
  end
end
if fresh > 0 then
  redis.call('INCRBY', newKey, fresh)
  redis.call('PEXPIRE', newKey, 120000)
end
return {'', fresh}
`;

type Run = <T>(what: string, op: () => Promise<T>) => Promise<T>;
interface AdmitRedis {
  /** The arguments go as one array (ioredis flattens it): spread, 40,000 series overflowed the call stack. */
  s4admit(prefix: string, args: (string | number)[]): Promise<[string, string | number, number?]>;
}

export function cardinalityPrefix(ns: string): string {
  return `s4c:{${ns}}:`;
}

/**
 * Cardinality counters in the hot tier's Redis, so every API process sharing it enforces the
 * same series limits and reports the same numbers. Admission is one script call per namespace.
 */
export class RedisCardinalityStore implements CardinalityStore {
  constructor(
    private readonly redis: Redis | Cluster,
    private readonly run: Run,
  ) {
    redis.defineCommand('s4admit', { numberOfKeys: 1, lua: ADMIT });
  }

  async admit(ns: string, series: readonly SeriesRef[], limits: AdmitLimits, now: number): Promise<AdmitResult> {
    const args: (string | number)[] = [now, limits.activeMs, limits.maxActiveSeries ?? -1, limits.maxNewSeriesPerMinute ?? -1, series.length];
    for (const s of series) args.push(s.metric, s.id);
    const reply = await this.run('checking series limits', () => (this.redis as unknown as AdmitRedis).s4admit(cardinalityPrefix(ns), args));
    if (reply[0] === '') return { admitted: true, fresh: Number(reply[1]) };
    return { admitted: false, limit: reply[0] as CardinalityLimit, metric: String(reply[1]), max: Number(reply[2]) };
  }

  async addSamples(ns: string, counts: ReadonlyMap<string, number>, now: number): Promise<void> {
    if (counts.size === 0) return;
    const p = cardinalityPrefix(ns);
    const minute = `${p}sm:${Math.floor(now / MINUTE_MS)}`;
    const hour = `${p}sh:${Math.floor(now / HOUR_MS)}`;
    await this.run('counting samples', async () => {
      const m = this.redis.multi();
      for (const [metric, n] of counts) {
        m.hincrby(minute, metric, n);
        m.hincrby(hour, metric, n);
      }
      m.pexpire(minute, 2 * HOUR_MS);
      m.pexpire(hour, 25 * HOUR_MS);
      await m.exec();
    });
  }

  async addRequests(ns: string, put: number, get: number, now: number): Promise<void> {
    const key = `${cardinalityPrefix(ns)}rq:${Math.floor(now / HOUR_MS)}`;
    await this.run('counting requests', async () => {
      await this.redis.multi().hincrby(key, 'put', put).hincrby(key, 'get', get).pexpire(key, 25 * HOUR_MS).exec();
    });
  }

  async requests(ns: string, now: number): Promise<{ put: number; get: number }> {
    const p = cardinalityPrefix(ns);
    const hour = Math.floor(now / HOUR_MS);
    const hours = await this.run('reading request counts', () => Promise.all(Array.from({ length: 24 }, (_, i) => this.redis.hgetall(`${p}rq:${hour - i}`))));
    return hours.reduce((t, h) => ({ put: t.put + Number(h.put ?? 0), get: t.get + Number(h.get ?? 0) }), { put: 0, get: 0 });
  }

  async usage(ns: string, activeMs: number, now: number): Promise<MetricUsage[]> {
    const p = cardinalityPrefix(ns);
    return this.run('reading series counts', async () => {
      const out = new Map<string, { activeSeries: number; samplesHour: number; samplesDay: number }>();
      const of = (metric: string) => {
        let u = out.get(metric);
        if (!u) out.set(metric, (u = { activeSeries: 0, samplesHour: 0, samplesDay: 0 }));
        return u;
      };
      const metrics = await this.redis.smembers(`${p}metrics`);
      const counts = await Promise.all(metrics.map((metric) => this.redis.zcount(`${p}m:${metric}`, now - activeMs + 1, '+inf')));
      metrics.forEach((metric, i) => {
        if (counts[i]! > 0) of(metric).activeSeries = counts[i]!;
      });
      const minute = Math.floor(now / MINUTE_MS);
      const hour = Math.floor(now / HOUR_MS);
      const minutes = await Promise.all(Array.from({ length: 60 }, (_, i) => this.redis.hgetall(`${p}sm:${minute - i}`)));
      const hours = await Promise.all(Array.from({ length: 24 }, (_, i) => this.redis.hgetall(`${p}sh:${hour - i}`)));
      for (const h of minutes) for (const [metric, n] of Object.entries(h)) of(metric).samplesHour += Number(n);
      for (const h of hours) for (const [metric, n] of Object.entries(h)) of(metric).samplesDay += Number(n);
      return [...out].map(([metric, u]) => ({ metric, ...u }));
    });
  }
}
