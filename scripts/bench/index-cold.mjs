// The first (cold) selection over the shard-day series indexes of a kept data dir, in a fresh
// process (as after a server start: the decode code not yet optimised), through a build's own
// SeriesIndexStore.blocks: CPU and wall ms for the first selection of every part, then for a warm
// repeat, and the heap the decoded indexes keep (after a GC). Reads files only.
// Usage (after `npm run build`):
//   node --expose-gc scripts/bench/index-cold.mjs DATA_DIR            this checkout's build
//   BUILD=/work/main node --expose-gc scripts/bench/index-cold.mjs DATA_DIR   another build (a baseline)
//   IDX_SELECTOR=tag1pct|probe (tag1pct)  IDX_HOST (host-3999, for probe)  IDX_PROF=FILE (a CPU profile of the cold run)
//   IDX_WARMUP=N (0): first N probe selections (one host of node_m0 each, on a new store every time), as
//     the bench's probes run before its tag query: then only the selector's own path is cold (the
//     bench's "first" tag query) and `cold` times its selection over indexes already loaded
//   CONVERT=2 node scripts/bench/index-cold.mjs DATA_DIR: rewrite every index of DATA_DIR in that version
//     with this build's encoder (a copy of a dir loaded by an older build, to compare the same data)
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
const env = process.env;
const ROOT = env.BUILD ?? new URL('../../', import.meta.url).pathname;
const dir = join(process.argv[2] ?? '/tmp/bench-coldidx/s4-20x4000x6', 'objects');
const keys = [];
for (const shard of readdirSync(join(dir, 'v1/bench/cat'))) {
  if (!/^\d+$/.test(shard)) continue;
  for (const f of readdirSync(join(dir, 'v1/bench/cat', shard))) if (f.endsWith('.s4idx')) keys.push(`v1/bench/cat/${shard}/${f}`);
}
const { encodeSeriesIndex, decodeSeriesIndex, indexedEntry, decodeCatalog } = await import(join(ROOT, 'libs/format/dist/index.js'));
if (env.CONVERT) {
  let before = 0;
  let after = 0;
  for (const k of keys) {
    const old = readFileSync(join(dir, k));
    const ix = decodeSeriesIndex(old);
    const input = { ns: ix.ns, shard: ix.shard, day: ix.day, parts: ix.parts.map((p) => ({ key: p.key, window: p.window, series: Array.from(p.ordinals, (_, i) => indexedEntry(ix, p, i)) })) };
    const bytes = encodeSeriesIndex(input, undefined, Number(env.CONVERT));
    before += old.length;
    after += bytes.length;
    writeFileSync(join(dir, k), bytes);
  }
  console.log(JSON.stringify({ converted: keys.length, version: Number(env.CONVERT), bytesBefore: before, bytesAfter: after }));
  process.exit(0);
}
const { FilesystemObjectStore } = await import(join(ROOT, 'libs/storage/dist/index.js'));
const { SeriesIndexStore } = await import(join(ROOT, 'libs/engine/dist/query/series-index-store.js'));
const objects = new FilesystemObjectStore(dir);
// The parts from the catalogs, so that no index is decoded before the timed selection.
const parts = [];
for (const k of keys) for (const e of decodeCatalog(readFileSync(join(dir, k.replace(/\.s4idx$/, '.s4cat')))).entries) parts.push(e.key);
const selectors = {
  tag1pct: { metric: 'node_m0', tags: {}, matchers: [{ key: 'host', op: '=~', value: 'host-[0-9]*00' }] },
  probe: { metric: 'node_m0', tags: { host: env.IDX_HOST ?? 'host-3999' }, matchers: [] },
};
const sel = selectors[env.IDX_SELECTOR ?? 'tag1pct'];
const heap = () => {
  globalThis.gc?.();
  return process.memoryUsage().heapUsed;
};
let now = Date.now();
const h0 = heap();
async function run() {
  const c = process.cpuUsage();
  const t = performance.now();
  let found = 0;
  for (const key of parts) found += (await store.blocks({ key }, { ...sel })).length;
  const u = process.cpuUsage(c);
  return { found, cpuMs: +((u.user + u.system) / 1000).toFixed(1), wallMs: +(performance.now() - t).toFixed(1) };
}
// IDX_PROF=FILE: a CPU profile of the cold selection alone (profile-summary.mjs reads it).
let session;
if (env.IDX_PROF) {
  const { Session } = await import('node:inspector/promises');
  session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 100 });
  await session.post('Profiler.start');
}
const warmups = Number(env.IDX_WARMUP ?? 0);
let store = warmups > 0 ? undefined : new SeriesIndexStore(objects, 256 * 2 ** 20, { now: () => now });
for (let r = 0; r < warmups; r++) {
  store = new SeriesIndexStore(objects, 256 * 2 ** 20, { now: () => now });
  for (const key of parts) await store.blocks({ key }, { metric: 'node_m0', tags: { host: `host-${1999 - r}` }, matchers: [] });
}
const cold = await run();
if (session) writeFileSync(env.IDX_PROF, JSON.stringify((await session.post('Profiler.stop')).profile));
const kept = heap() - h0;
const warm = await run();
now += 1_000; // within revalidation: the decoded copies answer
const warm2 = await run();
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(JSON.stringify({ build: ROOT, selector: env.IDX_SELECTOR ?? 'tag1pct', warmups, indexes: keys.length, parts: parts.length, cold, warm, warm2, heapKeptMB: +(kept / 2 ** 20).toFixed(2), load }));
