// The client's floor under issue 11's "R4 as parsed JSON" (all 300 machines × 10 min, target ≤ 1 s):
// JSON.parse of those 180,000 records as one JSON text, in this process, with nothing else to do.
// The records are the bench's own (scripts/bench/lib/records.mjs), each wrapped as an answer row
// ({"machine","ts","fields"}). Prints the text's size and CPU/wall per parse (3 runs).
// Usage: node scripts/bench/json-floor.mjs   (env: BENCH_MACHINES 300, BENCH_RECORD_MINUTES 10)
import { forEachRecord, plan } from './lib/records.mjs';
import { machine } from './lib/proc.mjs';

const machines = Number(process.env.BENCH_MACHINES ?? 300);
const minutes = Number(process.env.BENCH_RECORD_MINUTES ?? 10);
const rows = [];
forEachRecord(plan({ machines, seconds: minutes * 60, end: Date.UTC(2026, 10, 27, 10) }), (m, ts, text) => rows.push(`{"machine":"m${m}","ts":${ts},"fields":${text}}`));
const text = `{"records":[${rows.join(',')}]}`;
rows.length = 0;
const runs = [];
for (let i = 0; i < 3; i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  const parsed = JSON.parse(text);
  const c = process.cpuUsage(c0);
  runs.push({ wallMs: Math.round(performance.now() - t0), cpuMs: Math.round((c.user + c.system) / 1000), records: parsed.records.length });
}
console.log(JSON.stringify({ machines, minutes, megabytes: +(text.length / 1e6).toFixed(1), runs, machine: machine(), date: new Date().toISOString() }, null, 1));
