// Redis hot-tier scan cost (issue 12): BENCH_HOSTS (2,000) hosts × 20 metrics of one window in 16 shards,
// each log BENCH_LOG_BYTES (4,700: half an hour of a 10 s series as records), then queries' scans of one
// metric over every shard, as the engine runs them: with the query's selector (one host; or a matcher picking
// 1 % of the hosts) and without one (every log of the metric, as before scans took a selector).
// Per 16-shard scan: CPU of this process and of Redis (INFO cpu), wall time, log bytes moved.
// Usage: npm run build && S4_REDIS_URL=redis://127.0.0.1:PORT node scripts/bench/redis-scan.mjs
// (a Redis of your own: the probe writes namespace `rscan` and deletes it at the end).
const root = new URL('../..', import.meta.url).pathname.replace(/\/$/, '');
const { RedisHotTier } = await import(`${root}/libs/storage/dist/index.js`);
const { seriesId, shardOf } = await import(`${root}/libs/core/dist/index.js`);
const { Redis } = await import('ioredis');

const url = process.env.S4_REDIS_URL;
if (!url) throw new Error('S4_REDIS_URL is not set');
const HOSTS = Number(process.env.BENCH_HOSTS ?? 2_000);
const LOG = Number(process.env.BENCH_LOG_BYTES ?? 4_700);
const N = Number(process.env.BENCH_SCANS ?? 50);
const SHARDS = 16;
const W = Math.floor(Date.now() / 3_600_000) * 3_600_000 - 3_600_000;
const ns = 'rscan';
const tier = new RedisHotTier(url);
const raw = new Redis(url);
const redisCpuMs = async () => {
  const info = await raw.info('cpu');
  return (Number(/used_cpu_user:([\d.]+)/.exec(info)[1]) + Number(/used_cpu_sys:([\d.]+)/.exec(info)[1])) * 1000;
};

const bytes = new Uint8Array(LOG).fill(7);
for (let h0 = 0; h0 < HOSTS; h0 += 100) {
  const appends = [];
  for (let h = h0; h < Math.min(HOSTS, h0 + 100); h++)
    for (let m = 0; m < 20; m++) {
      const key = { metric: `node_m${m}`, tags: { dc: `dc-${h % 8}`, host: `host-${h}` } };
      const id = seriesId(key);
      appends.push({ ref: { ns, shard: shardOf(id, SHARDS) }, window: W, id, key, data: bytes });
    }
  await tier.append(appends);
}
const info = await raw.info('memory');
console.log(`${HOSTS * 20} series × ${LOG} B in Redis: used_memory ${(Number(/used_memory:(\d+)/.exec(info)[1]) / 2 ** 20).toFixed(0)} MiB`);

async function measure(name, selector) {
  const shards = Array.from({ length: SHARDS }, (_, shard) => ({ ns, shard }));
  // One warm-up pass, then N.
  for (const ref of shards) await tier.scan(ref, 'node_m0', W, W + 3_600_000, selector);
  const c0 = process.cpuUsage();
  const r0 = await redisCpuMs();
  const t0 = performance.now();
  let moved = 0;
  let logs = 0;
  for (let i = 0; i < N; i++) {
    // The engine reads shards in parallel (a few at a time); all at once here.
    const scans = await Promise.all(shards.map((ref) => tier.scan(ref, 'node_m0', W, W + 3_600_000, selector)));
    for (const s of scans) for (const l of s.logs) (moved += l.data.length), logs++;
  }
  const wall = (performance.now() - t0) / N;
  const r1 = await redisCpuMs();
  const c = process.cpuUsage(c0);
  console.log(
    `${name.padEnd(34)} ${(logs / N).toFixed(0).padStart(5)} logs ${(moved / N / 1024).toFixed(0).padStart(6)} KiB | CPU per 16-shard scan: S4 ${((c.user + c.system) / N / 1000).toFixed(2)} ms, Redis ${((r1 - r0) / N).toFixed(2)} ms | wall ${wall.toFixed(2)} ms`,
  );
}

await measure('no selector (every log)', undefined);
await measure('one host (tag equality)', { tags: { host: `host-${HOSTS - 1}` } });
await measure('1 % of hosts (regex matcher)', { tags: {}, matchers: [{ key: 'host', op: '=~', value: 'host-.*00' }] });

// Clean up: every key of the namespace's shards.
for (let shard = 0; shard < SHARDS; shard++) {
  let cursor = '0';
  do {
    const [next, keys] = await raw.scan(cursor, 'MATCH', `s4:{${ns}:${shard}}:*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await raw.del(...keys);
  } while (cursor !== '0');
}
await tier.close();
raw.disconnect();
