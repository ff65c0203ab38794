// Memory per active series of the hot tier (issue 12, part 4): N series (metric + 2 tags, as a
// scraper's: `metric{host,dc}`) each with `BENCH_SAMPLES` appends of one sample, in batches as the
// Writer sends them. Embedded: the process heap and array buffers after a full GC, before and
// after, over N. Redis: the server's used_memory (INFO memory) before and after, over N; the Redis
// adapter keeps nothing per series in the process.
// Usage: npm run build && node --expose-gc scripts/bench/series-memory.mjs
//   env: BENCH_SERIES (1000000) BENCH_SAMPLES (6) BENCH_MODES (embedded; add redis with S4_REDIS_URL,
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

const results = {};
for (const mode of MODES) {
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
