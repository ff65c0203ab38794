// Series index selections at scale (issue 12), in one process: the cardinality bench's probe selection (one
// host of node_m0) and its 1 % selection (host=~host-[0-9]*00) over every indexed part of the shard-day
// indexes a `npm run bench -- cardinality` run left in BENCH_WORK/card-embedded, through SeriesIndexStore.blocks
// with the indexes' default cache share (64 MB), 12 times 6 s apart on its clock (each revalidates): CPU per
// selection. Reads files only, so it may run beside the server that owns the directory.
// Usage: npm run build && BENCH_WORK=/tmp/s4-bench node scripts/bench/index-selections.mjs
//   env: INDEX_STORE (a built series-index-store.js to compare, default this build's) BENCH_HOSTS (50000)
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
const env = process.env;
const ROOT = new URL('../../', import.meta.url).pathname;
const { FilesystemObjectStore } = await import('../../libs/storage/dist/index.js');
const { decodeSeriesIndex } = await import('../../libs/format/dist/index.js');
const which = env.INDEX_STORE ?? join(ROOT, 'libs/engine/dist/query/series-index-store.js');
const mod = await import(which);
const dir = join(env.BENCH_WORK || '/tmp/s4-bench', 'card-embedded', 'objects');
const objects = new FilesystemObjectStore(dir);
const entries = [];
let series = 0;
for (const shard of readdirSync(join(dir, 'v1/bench/cat'))) {
  if (!/^\d+$/.test(shard)) continue; // shard folders only (not .days, .deletes)
  for (const f of readdirSync(join(dir, 'v1/bench/cat', shard))) if (f.endsWith('.s4idx')) {
    const key = `v1/bench/cat/${shard}/${f}`;
    const got = await objects.get(key);
    const ix = decodeSeriesIndex(got.body);
    series += ix.series.length;
    for (const p of ix.parts) entries.push({ key: p.key });
  }
}
let now = Date.now();
const store = new mod.SeriesIndexStore(objects, 64 * 2 ** 20, { now: () => now });
const selectors = {
  probe: { metric: 'node_m0', tags: { host: `host-${Number(env.BENCH_HOSTS ?? 50_000) - 1}` }, matchers: [] },
  tag1pct: { metric: 'node_m0', tags: {}, matchers: [{ key: 'host', op: '=~', value: 'host-[0-9]*00' }] },
};
const out = { which, indexedParts: entries.length, series };
for (const [name, sel] of Object.entries(selectors)) {
  const cpu = [];
  let found = 0;
  for (let i = 0; i < 12; i++) {
    now += 6_000; // as queries 6 s apart: every index revalidated
    const c = process.cpuUsage();
    found = 0;
    for (const e of entries) found += (await store.blocks(e, { ...sel }))?.length ?? 0;
    const d = process.cpuUsage(c);
    cpu.push((d.user + d.system) / 1000);
  }
  const s = [...cpu].sort((a, b) => a - b);
  out[name] = { found, firstCpuMs: Math.round(cpu[0]), medianCpuMs: Math.round(s[6]), maxCpuMs: Math.round(s[11]) };
}
console.log(JSON.stringify(out));
process.exit(0);
