#!/usr/bin/env node
// The Redis hot tier's append path alone (issue 11): RedisHotTier.append in this process against the
// Redis of $S4_REDIS_URL (FLUSHALLed first), no HTTP, no encoding above the hot tier. Reports this
// process' CPU (user + system) and Redis' CPU per appended log entry, for comparing builds back to back:
//
//   npm run build --silent
//   out=$(scripts/services/redis.sh start) && eval "$out"
//   BENCH_REDIS_PIDFILE=$S4_SERVICES_DIR/redis/redis.pid node scripts/bench/redis-append.mjs records|small
//
// Shapes: `records` = the records bench's requests (720 calls × 300 series × 1,660 bytes: 500 records of
// ~1 KB encoded over 300 machines), `small` = the cardinality bench's (10 calls × 40,000 series × 16 bytes,
// one sample each), `churn` = `small` with new series in every call (each append makes its log; run it with
// BENCH_CONCURRENCY=1: four calls of 40,000 new series in flight queue ~2 s of Redis work per round, which at a
// load of ~10 on 2 cores went past the 5 s command timeout with either build). Knobs: BENCH_SHARDS (16) BENCH_CONCURRENCY (4 calls in flight) BENCH_ROUNDS (1; repeat
// the whole shape, the same series again into the same window) BENCH_HOT_TIER_MODULE (the build to measure,
// default @s4/storage/redis: a copy of another build's libs/storage/dist/redis/index.js).
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { seriesId, shardOf } from '@s4/core';
import { pathToFileURL } from 'node:url';

const env = process.env;
const { RedisHotTier } = await import(env.BENCH_HOT_TIER_MODULE ? pathToFileURL(env.BENCH_HOT_TIER_MODULE).href : '@s4/storage/redis');
const shape = process.argv[2] ?? 'records';
const SHAPES = { records: { calls: 720, series: 300, bytes: 1660 }, small: { calls: 10, series: 40_000, bytes: 16 }, churn: { calls: 10, series: 40_000, bytes: 16, fresh: true } };
const S = SHAPES[shape];
if (!S) throw new Error(`shape ${shape}: records or small`);
const shards = Number(env.BENCH_SHARDS ?? 16);
const concurrency = Number(env.BENCH_CONCURRENCY ?? 4);
const rounds = Number(env.BENCH_ROUNDS ?? 1);
const url = env.S4_REDIS_URL;
if (!url) throw new Error('S4_REDIS_URL (scripts/services/redis.sh start)');

function cpuMs(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const rest = f.slice(f.lastIndexOf(')') + 2).split(' ');
  return ((Number(rest[11]) + Number(rest[12])) * 1000) / 100;
}

const u = new URL(url);
execFileSync('redis-cli', ['-h', u.hostname, '-p', u.port || '6379', 'FLUSHALL']);
const redisPid = env.BENCH_REDIS_PIDFILE ? Number(readFileSync(env.BENCH_REDIS_PIDFILE, 'utf8').trim()) : undefined;
const refs = Array.from({ length: shards }, (_, shard) => ({ ns: 'default', shard }));
const window = Math.floor(Date.now() / 3_600_000) * 3_600_000;
const batch = (call) =>
  Array.from({ length: S.series }, (_, i) => {
    const key = { metric: shape === 'records' ? 'machine.record' : `m${i % 20}`, tags: { host: `h${String(i).padStart(5, '0')}`, ...(S.fresh ? { call: String(call) } : {}) } };
    const id = seriesId(key);
    return { ref: refs[shardOf(id, shards)], window, id, key, data: new Uint8Array(randomBytes(S.bytes)) };
  });
const total = S.calls * rounds;
const batches = S.fresh ? Array.from({ length: total + 1 }, (_, i) => batch(i)) : [batch(0)];
const entries = batches[0];
const hot = new RedisHotTier(url);
await hot.append(entries.slice(0, 1)); // connect, load the scripts
let next = 0;
const c0 = process.cpuUsage();
const r0 = redisPid ? cpuMs(redisPid) : 0;
const t0 = performance.now();
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next < total) {
      const i = ++next;
      await hot.append(S.fresh ? batches[i] : entries);
    }
  }),
);
const ms = performance.now() - t0;
const c = process.cpuUsage(c0);
const redisMs = redisPid ? cpuMs(redisPid) - r0 : NaN;
const n = total * S.series;
await hot.close();
console.log(
  JSON.stringify({
    shape,
    shards,
    concurrency,
    appends: n,
    appendsPerSec: Math.round(n / (ms / 1000)),
    clientUsPerAppend: +((c.user + c.system) / n).toFixed(2),
    clientSysUsPerAppend: +(c.system / n).toFixed(2),
    redisUsPerAppend: +((redisMs * 1000) / n).toFixed(2),
    load: readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' '),
  }),
);
