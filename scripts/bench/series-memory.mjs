// Memory per active series of the hot tier (issue 12, part 4): N series (metric + 2 tags, as a
// scraper's: `metric{host,dc}`) each with `BENCH_SAMPLES` appends of one sample, in batches as the
// Writer sends them. Embedded: the process heap and array buffers after a full GC, before and
// after, over N. Redis: the server's used_memory (INFO memory) before and after, over N; the Redis
// adapter keeps nothing per series in the process. Identities: the write path's series caches
// (scan.ts's key-text cache and the identity cache behind it, sized by S4_SERIES_CACHE_ENTRIES) after
// N series were scanned from `{"series":[…]}` bodies of 50,000 as the cardinality bench sends
// them, twice (the second round must hit); with BENCH_KEY_JSON=1, plus the key JSON that keyJson keeps per key
// object (the Redis hot tier and the ingest log use it; the embedded hot tier no longer does).
// Usage: npm run build && node --expose-gc scripts/bench/series-memory.mjs
//   env: BENCH_SERIES (1000000) BENCH_SAMPLES (6) BENCH_MODES (embedded; add identities, and redis with S4_REDIS_URL,
//   best a private server: S4_REDIS_PORT=6492 S4_SERVICES_DIR=/tmp/s4-mem scripts/services/redis.sh start)
//   BENCH_HOT_TIER (dist module path of an EmbeddedHotTier to compare, default libs/storage/dist)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash, randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { machine } from './lib/proc.mjs';

const N = Number(process.env.BENCH_SERIES ?? 1_000_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 6);
const MODES = (process.env.BENCH_MODES ?? 'embedded').split(',');
const SHARDS = 16;
const BATCH = 20_000;
const storage = await import(process.env.BENCH_HOT_TIER ?? '../../libs/storage/dist/index.js');
const W = Date.UTC(2026, 10, 23, 10);

const keyOf = (i) => ({ metric: `node_metric_${i % 20}`, tags: { host: `host-${Math.floor(i / 20)}`, dc: `dc-${i % 7}` } });
const idOf = (key) => createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 16);
// One sample as the hot log holds it: a small record (timestamp delta + a float), ~12 bytes.
const record = (i, s) => Uint8Array.of(1, s, i & 255, (i >> 8) & 255, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, s);

async function fill(tier, ns) {
  const ids = new Array(N);
  for (let s = 0; s < SAMPLES; s++)
    for (let b = 0; b < N; b += BATCH) {
      const entries = [];
      for (let i = b; i < Math.min(N, b + BATCH); i++) {
        const key = keyOf(i);
        ids[i] ??= idOf(key);
        entries.push({ ref: { ns, shard: i % SHARDS }, window: W, id: ids[i], key, data: record(i, s) });
      }
      await tier.append(entries);
    }
}

const heap = () => {
  globalThis.gc?.();
  globalThis.gc?.();
  const m = process.memoryUsage();
  return m.heapUsed + m.arrayBuffers;
};

/** Bytes a series of the write path's caches hold, and whether a second round of the same series hits. */
async function identities() {
  const engine = await import('../../libs/engine/dist/index.js');
  const { keyJson } = await import('../../libs/core/dist/index.js');
  // A generation holds every series (the setting a deployment of N active series would use).
  engine.sizeSeriesCaches(N);
  const round = (r) => {
    const ids = new Set();
    for (let b = 0; b < N; b += 50_000) {
      const parts = [];
      for (let i = b; i < Math.min(N, b + 50_000); i++) {
        const k = keyOf(i);
        parts.push(`{"metric":"${k.metric}","tags":{"host":"${k.tags.host}","dc":"${k.tags.dc}"},"ts":[${W + r * 10_000}],"fields":{"value":[${i % 1000}.5]}}`);
      }
      const scanned = engine.runSteps(engine.scanSeriesSteps(Buffer.from(`{"series":[${parts.join(',')}]}`)));
      for (const e of scanned.entries) {
        if (process.env.BENCH_KEY_JSON === '1') keyJson(e.key);
        if (r === 0) ids.add(e.ident);
      }
    }
    return ids;
  };
  const before = heap();
  const t0 = performance.now();
  const first = round(0).size;
  const fill = performance.now() - t0;
  const after = heap();
  const t1 = performance.now();
  round(1);
  const again = performance.now() - t1;
  const afterAgain = heap();
  return {
    bytesPerSeries: Math.round((after - before) / N),
    afterSecondRound: Math.round((afterAgain - before) / N),
    distinct: first,
    // CPU of a round of misses (first) against one of hits (again), body building included.
    firstRoundUsPerSeries: +((fill * 1000) / N).toFixed(2),
    secondRoundUsPerSeries: +((again * 1000) / N).toFixed(2),
  };
}

const results = {};
for (const mode of MODES) {
  if (mode === 'identities') results.identities = await identities();
  const ns = `mem${randomUUID().slice(0, 6)}`;
  if (mode === 'embedded') {
    const dir = mkdtempSync(join(tmpdir(), 's4-mem-'));
    const before = heap();
    const tier = await storage.EmbeddedHotTier.open({ dir, fsync: 'never' });
    const t0 = performance.now();
    await fill(tier, ns);
    const after = heap();
    results.embedded = { bytesPerSeries: Math.round((after - before) / N), fillSeconds: +((performance.now() - t0) / 1000).toFixed(1), rssMB: Math.round(process.memoryUsage().rss / 2 ** 20) };
    await tier.close();
    rmSync(dir, { recursive: true, force: true });
  } else if (mode === 'redis') {
    const url = process.env.S4_REDIS_URL;
    if (!url) throw new Error('redis needs S4_REDIS_URL');
    const probe = new Redis(url);
    const used = async () => Number(/used_memory:(\d+)/.exec(await probe.info('memory'))[1]);
    const tier = new storage.RedisHotTier(url);
    const before = await used();
    const t0 = performance.now();
    await fill(tier, ns);
    const after = await used();
    results.redis = { bytesPerSeries: Math.round((after - before) / N), fillSeconds: +((performance.now() - t0) / 1000).toFixed(1) };
    await tier.close();
    // Leave the server as found: this namespace's keys go.
    let cursor = '0';
    do {
      const [next, keys] = await probe.scan(cursor, 'MATCH', `s4:{${ns}:*`, 'COUNT', 10_000);
      if (keys.length) await probe.unlink(...keys);
      cursor = next;
    } while (cursor !== '0');
    probe.disconnect();
  }
}
console.log(JSON.stringify({ series: N, samplesPerSeries: SAMPLES, results, machine: machine(), date: new Date().toISOString() }, null, 1));
