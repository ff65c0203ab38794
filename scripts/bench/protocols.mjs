// Protocol ingest bench (issue 15): Influx line protocol and Prometheus remote write into S4,
// each beside VictoriaMetrics taking the same bodies on its own endpoints (/write and
// /api/v1/write), on the 200-sensor float dataset of the main bench (scripts/bench/lib/dataset.mjs).
//
//   npm run build && node scripts/bench/protocols.mjs
//
// S4 runs embedded with its defaults (fsync always, periodic flush and rollups on), as users run
// it; VictoriaMetrics is the Debian package (run.sh installs it: apt-get install victoria-metrics).
// Env: BENCH_SENSORS (200), BENCH_HOURS (2), BENCH_BATCH_SAMPLES (50000), BENCH_INGEST_CONCURRENCY
// (4), BENCH_ROUNDS (3: S4 and VM alternate, each on a fresh data dir), BENCH_VM_BIN, BENCH_WORK.
import { rmSync, mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { batches, generate, HOUR } from './lib/dataset.mjs';
import { mapLimit, ok, waitHttp } from './lib/http.mjs';
import { machine, start, stop } from './lib/proc.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { encodeWriteRequest, snappyCompress } = await import(join(ROOT, 'libs/format/dist/index.js'));
const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  sensors: num('BENCH_SENSORS', 200),
  hours: num('BENCH_HOURS', 2),
  batchSamples: num('BENCH_BATCH_SAMPLES', 50_000),
  concurrency: num('BENCH_INGEST_CONCURRENCY', 4),
  rounds: num('BENCH_ROUNDS', 3),
};
const WORK = env.BENCH_WORK || '/tmp/s4-bench-protocols';
const VM_BIN = env.BENCH_VM_BIN || 'victoria-metrics';
const log = (...a) => console.error(`[protocols ${new Date().toISOString().slice(11, 19)}]`, ...a);

function childEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra };
}

/** A port nobody listens on (other sessions' servers share this machine). */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
    srv.on('error', reject);
  });
}

async function startS4(name) {
  const port = await freePort();
  const dataDir = join(WORK, name);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const child = start(process.execPath, [join(ROOT, 'apps/api/dist/main.js')], {
    env: childEnv({ S4_HOST: '127.0.0.1', S4_PORT: String(port), S4_LOG_LEVEL: 'warn', S4_NAMESPACE: 'bench', S4_DATA_DIR: dataDir }),
    log: join(WORK, `${name}.log`),
  });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/readyz`, 60_000);
  return { child, url };
}

async function startVM(name) {
  const port = await freePort();
  const dataDir = join(WORK, name);
  rmSync(dataDir, { recursive: true, force: true });
  const child = start(VM_BIN, [`-httpListenAddr=127.0.0.1:${port}`, `-storageDataPath=${dataDir}`, '-retentionPeriod=100y', '-loggerLevel=ERROR'], { env: childEnv({}), log: join(WORK, `${name}.log`) });
  const url = `http://127.0.0.1:${port}`;
  await waitHttp(`${url}/health`, 30_000);
  return { child, url };
}

async function post(url, bodies, headers) {
  const t0 = performance.now();
  await mapLimit(bodies, K.concurrency, (b) => ok(url, { method: 'POST', body: b, headers }));
  return performance.now() - t0;
}

mkdirSync(WORK, { recursive: true });
const startTs = Math.floor(Date.now() / HOUR) * HOUR - (K.hours + 1) * HOUR;
const ds = generate({ sensors: K.sensors, hours: K.hours, start: startTs });
const bs = batches(ds, K.batchSamples);
log(`${ds.samples} samples of ${K.sensors} sensors over ${K.hours} h in ${bs.length} batches`);

// Line protocol, ms precision: `bench_value,sensor=s001 value=21.37 1700000000123`.
const lineBodies = bs.map((b) => {
  const lines = [];
  for (const p of b.parts) for (let i = 0; i < p.ts.length; i++) lines.push(`bench_value,sensor=${p.name} value=${p.value[i]} ${p.ts[i]}`);
  return Buffer.from(lines.join('\n'));
});
// Remote write 1.0: one TimeSeries per sensor per batch, snappy-compressed as Prometheus sends.
const remoteBodies = bs.map((b) =>
  Buffer.from(snappyCompress(encodeWriteRequest(b.parts.map((p) => ({ labels: [['__name__', 'bench_value'], ['sensor', p.name]], ts: Array.from(p.ts), values: Array.from(p.value) }))))),
);
const lpBytes = lineBodies.reduce((a, b) => a + b.length, 0);
const rwBytes = remoteBodies.reduce((a, b) => a + b.length, 0);
log(`line protocol ${(lpBytes / 2 ** 20).toFixed(1)} MiB, remote write ${(rwBytes / 2 ** 20).toFixed(1)} MiB`);

const RW_HEADERS = { 'content-type': 'application/x-protobuf', 'content-encoding': 'snappy', 'x-prometheus-remote-write-version': '0.1.0' };
const results = { line: { s4: [], vm: [] }, remote: { s4: [], vm: [] } };
for (let round = 0; round < K.rounds; round++) {
  for (const system of ['s4', 'vm']) {
    for (const proto of ['line', 'remote']) {
      const name = `${system}-${proto}-${round}`;
      const server = system === 's4' ? await startS4(name) : await startVM(name);
      try {
        const url = proto === 'line' ? `${server.url}/write?db=bench&precision=ms` : `${server.url}/api/v1/write`;
        const ms = await post(url, proto === 'line' ? lineBodies : remoteBodies, proto === 'line' ? { 'content-type': 'text/plain; charset=utf-8' } : RW_HEADERS);
        const rate = ds.samples / (ms / 1000);
        results[proto][system].push(rate);
        log(`${name}: ${Math.round(rate).toLocaleString('en')} samples/s (${(ms / 1000).toFixed(1)} s)`);
      } finally {
        await stop(server.child);
      }
    }
  }
}

// The middle value; the mean of the two middle ones for an even count.
const median = (a) => {
  const s = [...a].sort((x, y) => x - y);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const fmt = (n) => Math.round(n).toLocaleString('en');
const m = machine();
const report = {
  date: new Date().toISOString(),
  machine: m,
  command: 'node scripts/bench/protocols.mjs',
  knobs: K,
  samples: ds.samples,
  bytes: { lineProtocol: lpBytes, remoteWrite: rwBytes },
  results,
};
writeFileSync(join(WORK, 'protocols.json'), JSON.stringify(report, null, 2));
console.log(
  [
    `| protocol | S4 samples/s | VictoriaMetrics samples/s | S4/VM |`,
    `|---|---|---|---|`,
    `| Influx line protocol (\`/write\`, ${(lpBytes / ds.samples).toFixed(1)} B/sample) | ${fmt(median(results.line.s4))} | ${fmt(median(results.line.vm))} | ${(median(results.line.s4) / median(results.line.vm)).toFixed(2)} |`,
    `| Prometheus remote write (\`/api/v1/write\`, ${(rwBytes / ds.samples).toFixed(1)} B/sample) | ${fmt(median(results.remote.s4))} | ${fmt(median(results.remote.vm))} | ${(median(results.remote.s4) / median(results.remote.vm)).toFixed(2)} |`,
    '',
    `${ds.samples.toLocaleString('en')} samples (${K.sensors} sensors × ${K.hours} h at 1 Hz), batches of ~${K.batchSamples.toLocaleString('en')} samples, ${K.concurrency} in flight, median of ${K.rounds} rounds (each on a fresh data dir); ${m.cpu}, ${m.cores} cores, Node ${m.node}; ${report.date}.`,
  ].join('\n'),
);
