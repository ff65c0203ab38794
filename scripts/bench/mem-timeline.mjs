// Where a bench run's server memory peak falls (issue 11): reads the per-thread samples that
// scripts/bench/mem-probe.mjs wrote (MEM_PROBE_OUT) and the bench's own output (its
// "[records HH:MM:SS] …" or "[cardinality HH:MM:SS] …" lines, UTC), and prints the process RSS
// and VmHWM every few seconds beside each thread's heap (used/total) and ArrayBuffers, with the
// bench's last line at that time, then the samples around the peak. The bench prints a phase's
// line when the phase ends: a row shows the last phase finished, so rows after "R3 …" are R4's.
// RSS beyond the sum of the threads' heaps and ArrayBuffers is native memory (code, stacks,
// compression contexts, and what malloc keeps after ArrayBuffers are freed).
//
//   MEM_PROBE_OUT=/tmp/probe BENCH_S4_NODE_ARGS="--import=$PWD/scripts/bench/mem-probe.mjs" \
//     BENCH_MODES=embedded npm run bench -- records 2>&1 | tee /tmp/bench.log
//   node scripts/bench/mem-timeline.mjs /tmp/probe /tmp/bench.log [seconds between rows (10)]
//
// The probe dir and the log must be outside BENCH_WORK (the bench empties it at start).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const [dir, logFile, every = '10'] = process.argv.slice(2);
if (!dir || !logFile) {
  console.error('usage: node scripts/bench/mem-timeline.mjs PROBE_DIR BENCH_LOG [SECONDS]');
  process.exit(2);
}
const files = readdirSync(dir).filter((f) => f.startsWith('probe-') && f.endsWith('.ndjson'));
if (files.length === 0) throw new Error(`no probe-*.ndjson in ${dir}`);
// The server's file: the one with the most samples (a bench may start short-lived servers too).
const samples = files
  .map((f) => readFileSync(join(dir, f), 'utf8').split('\n').filter(Boolean).map((l) => JSON.parse(l)))
  .sort((a, b) => b.length - a.length)[0];
const t0 = samples[0].t;
const day = new Date(t0).toISOString().slice(0, 10);
const phases = [];
for (const line of readFileSync(logFile, 'utf8').split('\n')) {
  const m = /\[(?:records|cardinality|bench) (\d\d:\d\d:\d\d)\] (.*)/.exec(line);
  if (!m) continue;
  let t = Date.parse(`${day}T${m[1]}Z`);
  // A run across midnight (UTC): the log's clock went round.
  if (t < t0 - 3_600_000) t += 86_400_000;
  phases.push({ t, text: m[2].slice(0, 60) });
}
const threads = new Map();
for (const s of samples) {
  if (!threads.has(s.thread)) threads.set(s.thread, []);
  threads.get(s.thread).push(s);
}
const main = threads.get('main') ?? [];
const near = (list, t) => list.reduce((a, b) => (Math.abs(b.t - t) < Math.abs(a.t - t) ? b : a));
const phaseAt = (t) => phases.filter((p) => p.t <= t).at(-1)?.text ?? '';
const row = (s) => {
  const parts = [...threads].map(([name, list]) => {
    const x = near(list, s.t);
    return `${name === 'main' ? 'main' : name.split(':')[1]} ${x.heapUsed}/${x.heapTotal} ab ${x.arrayBuffers}`;
  });
  return `${String(Math.round((s.t - t0) / 1000)).padStart(5)} s  rss ${String(s.rss).padStart(5)}  hwm ${String(s.hwm).padStart(5)} | ${parts.join(' | ')} | ${phaseAt(s.t)}`;
};
console.log('time     MiB: process RSS, VmHWM | per thread: heap used/total MB, ArrayBuffers MB | bench phase');
let next = 0;
for (const s of main) {
  if (s.t < next) continue;
  console.log(row(s));
  next = s.t + Number(every) * 1000;
}
const peak = main.reduce((a, b) => (b.rss > a.rss ? b : a));
console.log(`\npeak RSS ${peak.rss} MiB at ${Math.round((peak.t - t0) / 1000)} s (VmHWM at the end ${main.at(-1).hwm} MiB); around it:`);
for (const s of main.filter((x) => Math.abs(x.t - peak.t) <= 2000)) console.log(row(s));
