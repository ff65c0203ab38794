// The float bench's queries against a server restarted on a kept data dir of `npm run bench`
// (embedded: $BENCH_WORK/s4-embedded), with the server's CPU per query: a probe of query paths
// without the load and the workers' passes of the bench around it.
//
//   BENCH_MODES=embedded npm run bench        # leaves its data in $BENCH_WORK/s4-embedded
//   node scripts/bench/kept-queries.mjs       # times Q1 (msgpack, json), Q3 and Q5
//
// Knobs: BENCH_WORK (/tmp/s4-bench), BENCH_S4_PORT (18490), BENCH_QUERIES (Q1,Q1J,Q3,Q5),
// BENCH_REPEATS (10, after one warm-up), BENCH_HOURS (24: the range ends at the end of the
// newest hour window in the data), BENCH_S4_DIST (apps/api/dist/main.js of another checkout,
// to compare builds on the same data: copy the dir first, a server may fold its parts),
// BENCH_S4_NODE_ARGS (e.g. --cpu-prof --cpu-prof-dir=/tmp/prof).
import { readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadavg } from 'node:os';
import { request, waitHttp } from './lib/http.mjs';
import { cpuMs, start, stop } from './lib/proc.mjs';
import { s4Paths } from './lib/float-queries.mjs';

const env = process.env;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const WORK = env.BENCH_WORK || '/tmp/s4-bench';
const DATA = join(WORK, 's4-embedded');
const PORT = Number(env.BENCH_S4_PORT || 18490);
const URL_ = `http://127.0.0.1:${PORT}`;
const HOUR = 3_600_000;

/** The end of the newest hour window holding parts (segment keys name their window: …/seg/0003/20261129T13Z/…). */
function dataEnd() {
  let last = 0;
  const seg = join(DATA, 'objects/v1/bench/seg');
  for (const shard of readdirSync(seg))
    for (const w of readdirSync(join(seg, shard))) {
      const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})Z$/.exec(w);
      if (m) last = Math.max(last, Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4]));
    }
  if (last === 0) throw new Error(`no hour windows under ${seg}: run the bench first`);
  return last + HOUR;
}

const to = dataEnd();
const from = to - Number(env.BENCH_HOURS || 24) * HOUR;
const paths = s4Paths({ sensor: 's000', day: { from, to }, hour: { from: to - HOUR, to } });
const QUERIES = { Q1: paths.Q1.msgpack, Q1J: paths.Q1.json, Q3: paths.Q3, Q5: paths.Q5 };

const names = (env.BENCH_QUERIES || 'Q1,Q1J,Q3,Q5').split(',');
const repeats = Number(env.BENCH_REPEATS || 10);
const childEnv = {};
for (const [k, v] of Object.entries(env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') childEnv[k] = v;
Object.assign(childEnv, { S4_HOST: '127.0.0.1', S4_PORT: String(PORT), S4_LOG_LEVEL: 'warn', S4_NAMESPACE: 'bench', S4_DATA_DIR: DATA, S4_EMBEDDED_FSYNC: 'always' });
const main = env.BENCH_S4_DIST || join(ROOT, 'apps/api/dist/main.js');
const s4 = start(process.execPath, [...(env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean), main], { env: childEnv, log: join(WORK, 'kept-queries.log') });
try {
  await waitHttp(`${URL_}/readyz`, 120_000);
  console.log(`range ${new Date(from).toISOString()} – ${new Date(to).toISOString()}`);
  for (const name of names) {
    const rows = [];
    for (let i = 0; i <= repeats; i++) {
      const c0 = cpuMs(s4.pid);
      const t0 = performance.now();
      const r = await request(URL_ + QUERIES[name]);
      const wall = performance.now() - t0;
      if (r.status !== 200) throw new Error(`${name} → ${r.status}: ${r.body.toString().slice(0, 300)}`);
      if (i > 0) rows.push({ wall, server: cpuMs(s4.pid) - c0, bytes: r.body.length });
    }
    const med = (k) => rows.map((r) => r[k]).sort((a, b) => a - b)[rows.length >> 1];
    console.log(`${name.padEnd(4)} wall ${med('wall').toFixed(1)} ms (${rows.map((r) => r.wall.toFixed(0)).join(' ')}); server CPU ${med('server')} ms; ${rows[0].bytes} B; load ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  }
} finally {
  await stop(s4);
}
