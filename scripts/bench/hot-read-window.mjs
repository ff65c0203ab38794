// CPU and garbage of the embedded hot tier's readWindow (what a flush asks of the HTTP thread in
// embedded mode, through the role threads' RPC): one shard-window of BENCH_SERIES logs of
// BENCH_SAMPLES one-sample appends, read whole PROBE_READS times.
//   node --expose-gc scripts/bench/hot-read-window.mjs        (after `npm run build`)
//   knobs: BENCH_SERIES (60000) BENCH_SAMPLES (6) PROBE_READS (10)
//          BENCH_HOT_TIER (dist module of an EmbeddedHotTier to compare, default libs/storage/dist)
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';

const N = Number(process.env.BENCH_SERIES ?? 60_000);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 6);
const READS = Number(process.env.PROBE_READS ?? 10);
const storage = await import(process.env.BENCH_HOT_TIER ?? '../../libs/storage/dist/index.js');
const W = Date.UTC(2026, 10, 23, 10);
const ref = { ns: 'default', shard: 0 };
const keys = Array.from({ length: N }, (_, i) => ({ metric: `node_m${i % 20}`, tags: { host: `host-${Math.floor(i / 20)}`, dc: `dc-${i % 8}` } }));
const ids = keys.map((k) => createHash('sha256').update(JSON.stringify(k)).digest().toString('hex', 0, 8));
const record = (i, s) => Uint8Array.of(1, s, i & 255, (i >> 8) & 255, 0x40, 0x09, 0x21, 0xfb, 0x54, 0x44, 0x2d, s);

const dir = mkdtempSync(join(tmpdir(), 's4-read-window-'));
const tier = await storage.EmbeddedHotTier.open({ dir, fsync: 'never' });
for (let s = 0; s < SAMPLES; s++)
  for (let b = 0; b < N; b += 20_000) {
    const entries = [];
    for (let i = b; i < Math.min(N, b + 20_000); i++) entries.push({ ref, window: W, id: ids[i], key: keys[i], data: record(i, s) });
    await tier.append(entries);
  }
globalThis.gc?.();
let cpu = 0;
let allocated = 0;
let bytes = 0;
for (let r = 0; r < READS; r++) {
  globalThis.gc?.();
  const h0 = process.memoryUsage();
  const c0 = process.cpuUsage();
  const logs = await tier.readWindow(ref, W);
  for (const l of logs) bytes += l.data.length;
  const c = process.cpuUsage(c0);
  const h = process.memoryUsage();
  cpu += c.user + c.system;
  allocated += h.heapUsed + h.arrayBuffers - h0.heapUsed - h0.arrayBuffers;
  if (logs.length !== N) throw new Error(`read ${logs.length} logs, wrote ${N}`);
}
await tier.close();
rmSync(dir, { recursive: true, force: true });
const load = readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
console.log(JSON.stringify({ series: N, samples: SAMPLES, reads: READS, cpuUsPerLog: +(cpu / (READS * N)).toFixed(3), heldBytesPerLog: Math.round(allocated / (READS * N)), bytesPerLog: bytes / (READS * N), load }));
