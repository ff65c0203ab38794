// Memory of an idle embedded server: started on an empty data dir with S4's defaults, asked for
// /readyz, then left alone for a while; prints VmRSS and VmHWM (what every deployment pays before
// its first write: the runtime, the framework, and each role thread's modules).
//
//   node scripts/bench/idle-memory.mjs          # knobs: BENCH_WORK (/tmp/s4-r4), BENCH_S4_PORT (18480),
//                                               # BENCH_S4_DIST (another build), BENCH_IDLE_MS (8000), BENCH_REPEATS (3)
import { mkdtempSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { memory, stop } from './lib/proc.mjs';
import { WORK, num, startS4 } from './lib/kept-records.mjs';

mkdirSync(WORK, { recursive: true });
for (let i = 0; i < num('BENCH_REPEATS', 3); i++) {
  const dir = mkdtempSync(join(WORK, 'idle-data-'));
  const s4 = await startS4({ dir, log: 'idle-s4.log' });
  await new Promise((ok) => setTimeout(ok, num('BENCH_IDLE_MS', 8000)));
  const m = memory(s4.pid);
  console.log(`idle embedded server: VmRSS ${(m.rss / 1048576).toFixed(0)} MiB, VmHWM ${(m.hwm / 1048576).toFixed(0)} MiB`);
  await stop(s4);
  rmSync(dir, { recursive: true, force: true });
}
