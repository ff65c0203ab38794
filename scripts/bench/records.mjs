// Records workload (issue 11, "Measure"): DirtMate-shaped nested records (N machines × 1 Hz, ~1.65 KB
// of JSON each) written to S4 and to PostgreSQL 15 (jsonb), then read back. Started by
// scripts/bench/run.sh (`npm run bench -- records`), which builds S4, installs PostgreSQL when
// missing, starts Redis + S3 on the bench's own ports and passes their env lines.
//
// One client process for both systems: node:http with a keep-alive agent for S4 (and the built SDK
// for the SDK rows), a minimal wire-protocol client (lib/pgwire.mjs, one connection per client)
// for PostgreSQL. Everything read is parsed into records ({machine, ts, rec}) before the clock stops.
import { execFileSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, readSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registered } from './lib/at-rest.mjs';
import { HOUR } from './lib/dataset.mjs';
import http from 'node:http';
import { StringDecoder } from 'node:string_decoder';
import { agent, ok, request, waitHttp } from './lib/http.mjs';
import { PgConn, copyText, lit } from './lib/pgwire.mjs';
import { dirBytes, machine, memory, start, stop } from './lib/proc.mjs';
import { countRecords, forEachRecord, jsonDiff, machineName, machineRecords, plan } from './lib/records.mjs';
import { renderRecordsDoc } from './lib/records-report.mjs';
import { percentile, summary } from './lib/stats.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const env = process.env;
const num = (k, d) => (env[k] === undefined || env[k] === '' ? d : Number(env[k]));
const K = {
  machines: num('BENCH_MACHINES', 300),
  hours: env.BENCH_RECORD_MINUTES ? num('BENCH_RECORD_MINUTES', 120) / 60 : num('BENCH_RECORD_HOURS', 2),
  repeats: num('BENCH_REPEATS', 5),
  batchRecords: num('BENCH_BATCH_RECORDS', 500),
  ingestConcurrency: num('BENCH_INGEST_CONCURRENCY', 4),
  verifyMachines: num('BENCH_VERIFY_MACHINES', 10),
  modes: (env.BENCH_MODES || 'embedded,redis+s3').split(',').map((s) => s.trim()).filter(Boolean),
  writeDoc: env.BENCH_WRITE_DOC !== '0',
  s4Port: num('BENCH_S4_PORT', 18480),
  pgPort: num('BENCH_PG_PORT', 18432),
};
const WORK = env.BENCH_WORK || '/tmp/s4-bench';
const METRIC = 'machine.record';
const BUCKET = env.BENCH_S3_BUCKET || 's4-bench-records';
const MB = 1e6;
const log = (...a) => console.error(`[records ${new Date().toISOString().slice(11, 19)}]`, ...a);

// ---------------------------------------------------------------- dataset → request bodies on disk
/**
 * Encodes every batch once, before any clock starts, for both systems: S4 `{"samples":[…]}` JSON
 * (top-level record keys as fields) and PostgreSQL COPY text (machine, ts, rec). The bodies go to
 * two files under BENCH_WORK (a full run is ~3.6 GB of JSON each) and are read back batch by batch.
 */
function encodeBatches(p) {
  const dir = join(WORK, 'records-data');
  mkdirSync(dir, { recursive: true });
  const s4fd = openSync(join(dir, 's4.json-batches'), 'w');
  const pgfd = openSync(join(dir, 'pg.copy-batches'), 'w');
  const batches = [];
  let s4Off = 0;
  let pgOff = 0;
  let s4Parts = [];
  let pgParts = [];
  let n = 0;
  let jsonBytes = 0;
  let sizes = { min: Infinity, max: 0 };
  const names = Array.from({ length: p.machines }, (_, m) => machineName(m));
  const heads = names.map((name) => `{"metric":"${METRIC}","tags":{"machine":"${name}"},"ts":`);
  const close = () => {
    if (!n) return;
    const s4 = Buffer.from(`{"samples":[${s4Parts.join(',')}]}`);
    const pg = Buffer.from(pgParts.join(''));
    writeSync(s4fd, s4);
    writeSync(pgfd, pg);
    batches.push({ records: n, s4: [s4Off, s4.length], pg: [pgOff, pg.length] });
    s4Off += s4.length;
    pgOff += pg.length;
    s4Parts = [];
    pgParts = [];
    n = 0;
  };
  forEachRecord(p, (m, ts, text) => {
    const bytes = Buffer.byteLength(text);
    jsonBytes += bytes;
    if (bytes < sizes.min) sizes.min = bytes;
    if (bytes > sizes.max) sizes.max = bytes;
    s4Parts.push(`${heads[m]}${ts},"fields":${text}}`);
    pgParts.push(`${names[m]}\t${new Date(ts).toISOString()}\t${copyText(text)}\n`);
    if (++n === K.batchRecords) close();
  });
  close();
  closeSync(s4fd);
  closeSync(pgfd);
  return { dir, batches, jsonBytes, s4Bytes: s4Off, pgBytes: pgOff, recordBytes: { ...sizes, mean: jsonBytes / p.records } };
}

function batchReader(file) {
  const fd = openSync(file, 'r');
  return {
    read([off, len]) {
      const b = Buffer.allocUnsafe(len);
      let got = 0;
      while (got < len) got += readSync(fd, b, got, len - got, off + got);
      return b;
    },
    close: () => closeSync(fd),
  };
}

/** `clients` workers, each with its own connection/state, pulling batches in order. */
async function pool(items, clients, makeClient, send) {
  let next = 0;
  const lat = new Float64Array(items.length);
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: Math.min(clients, items.length) }, async () => {
      const c = await makeClient();
      try {
        while (next < items.length) {
          const i = next++;
          const s = performance.now();
          await send(c, items[i], i);
          lat[i] = performance.now() - s;
        }
      } finally {
        c?.close?.();
      }
    }),
  );
  const ms = performance.now() - t0;
  const sorted = lat.slice().sort();
  return { ms, batchP50: percentile(sorted, 50), batchP99: percentile(sorted, 99) };
}

function ingestResult(r, enc, records, bodyBytes) {
  const secs = r.ms / 1000;
  return { records, ms: r.ms, recordsPerSec: records / secs, jsonMBPerSec: enc.jsonBytes / MB / secs, bodyMBPerSec: bodyBytes / MB / secs, batches: enc.batches.length, batchP50: r.batchP50, batchP99: r.batchP99 };
}

// ---------------------------------------------------------------- PostgreSQL
const PG = {
  bin: env.BENCH_PG_BINDIR || '/usr/lib/postgresql/15/bin',
  dir: join(WORK, 'pg'),
  get data() {
    return join(this.dir, 'data');
  },
};
const asRoot = typeof process.getuid === 'function' && process.getuid() === 0;
function pgExec(tool, args) {
  const cmd = join(PG.bin, tool);
  const out = asRoot ? execFileSync('runuser', ['-u', 'postgres', '--', cmd, ...args], { cwd: '/', encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }) : execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  return out.trim();
}
function pgVersion() {
  try {
    return execFileSync(join(PG.bin, 'postgres'), ['--version'], { encoding: 'utf8' }).trim().replace(/^postgres \(PostgreSQL\) /, '');
  } catch {
    return 'unknown';
  }
}
async function startPg() {
  rmSync(PG.dir, { recursive: true, force: true });
  mkdirSync(join(PG.dir, 'sock'), { recursive: true });
  if (asRoot) {
    const ids = execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim();
    const gid = execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim();
    for (const d of [PG.dir, join(PG.dir, 'sock')]) chownSync(d, Number(ids), Number(gid));
  }
  pgExec('initdb', ['-D', PG.data, '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--no-locale']);
  // defaults everywhere (shared_buffers 128 MB, fsync and synchronous_commit on); only where it listens
  const opts = `-p ${K.pgPort} -k ${join(PG.dir, 'sock')} -c listen_addresses=127.0.0.1`;
  pgExec('pg_ctl', ['-D', PG.data, '-l', join(PG.dir, 'pg.log'), '-o', opts, '-w', '-t', '60', 'start']);
  const c = await PgConn.connect({ port: K.pgPort });
  await c.query('CREATE TABLE records (machine text NOT NULL, ts timestamptz NOT NULL, rec jsonb NOT NULL)');
  await c.query('CREATE INDEX records_machine_ts ON records (machine, ts)');
  return c;
}
function stopPg() {
  if (!existsSync(join(PG.data, 'postmaster.pid'))) return;
  try {
    pgExec('pg_ctl', ['-D', PG.data, '-m', 'fast', '-w', 'stop']);
  } catch (e) {
    log(`pg_ctl stop: ${e.message}`);
  }
}

/** Every dirty page of the machine written back (`sync`), so that one system's writeback does not land on the next one's load. */
function settleDisk() {
  execFileSync('sync');
}

/** The postmaster and its children (backends, checkpointer, walwriter, …): RSS and PSS sums, bytes. */
function pgMemory() {
  let pid;
  try {
    pid = Number(readFileSync(join(PG.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    return null;
  }
  const pids = [pid];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const st = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(st.slice(st.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) pids.push(Number(d));
    } catch {
      // gone
    }
  }
  let rss = 0;
  let pss = 0;
  let hwm = 0;
  for (const p of pids) {
    const m = memory(p);
    if (!m) continue;
    rss += m.rss;
    hwm += m.hwm;
    try {
      pss += Number(/^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${p}/smaps_rollup`, 'utf8'))?.[1] ?? 0) * 1024;
    } catch {
      // no smaps_rollup
    }
  }
  return { processes: pids.length, rss, pss, hwmSum: hwm };
}

const iso = (ms) => lit(new Date(ms).toISOString());

// ---------------------------------------------------------------- S4
function childEnv(extra) {
  const e = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('S4_') && !k.startsWith('AWS_') && k !== 'NODE_OPTIONS') e[k] = v;
  return { ...e, ...extra };
}

/** S4's defaults (periodic flush and rollups on); only where it listens and keeps its data. */
function s4Env(mode, dataDir) {
  const common = { S4_HOST: '127.0.0.1', S4_PORT: String(K.s4Port), S4_LOG_LEVEL: 'warn', S4_DATA_DIR: dataDir };
  if (mode === 'embedded') return common;
  if (mode === 'redis+s3') {
    for (const k of ['S4_REDIS_URL', 'S4_S3_ENDPOINT', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'])
      if (!env[k]) throw new Error(`mode redis+s3 needs ${k} (run.sh starts Redis and S3 and exports it)`);
    return {
      ...common,
      S4_REDIS_URL: env.S4_REDIS_URL,
      S4_S3_BUCKET: BUCKET,
      S4_S3_ENDPOINT: env.S4_S3_ENDPOINT,
      S4_S3_FORCE_PATH_STYLE: 'true',
      AWS_REGION: env.AWS_REGION || 'us-east-1',
      AWS_ACCESS_KEY_ID: env.AWS_ACCESS_KEY_ID,
      AWS_SECRET_ACCESS_KEY: env.AWS_SECRET_ACCESS_KEY,
    };
  }
  throw new Error(`unknown mode ${mode} (embedded, redis+s3)`);
}

async function startS4(mode) {
  const name = `records-s4-${mode.replace(/[^a-z0-9-]/g, '-')}`;
  const dataDir = join(WORK, name);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const logf = join(WORK, `${name}.log`);
  const prof = env.BENCH_CPU_PROF === '1' ? ['--cpu-prof', `--cpu-prof-dir=${join(WORK, 'prof')}`] : [];
  const child = start(process.execPath, [...prof, ...(env.BENCH_S4_NODE_ARGS ?? '').split(' ').filter(Boolean), join(ROOT, 'apps/api/dist/main.js')], { env: childEnv(s4Env(mode, dataDir)), log: logf });
  const url = `http://127.0.0.1:${K.s4Port}`;
  await Promise.race([waitHttp(`${url}/readyz`, 60_000), child.exitedPromise.then((x) => Promise.reject(new Error(`S4 (${mode}) exited during start: ${JSON.stringify(x)}; see ${logf}`)))]);
  return { child, url, dataDir, mode };
}

/** Object bytes by kind: segments (seg/), catalogs (cat/), rollups (rollup/), anything else. */
function objectBytes(root) {
  const out = { seg: { bytes: 0, files: 0 }, cat: { bytes: 0, files: 0 }, rollup: { bytes: 0, files: 0 }, other: { bytes: 0, files: 0 } };
  const total = dirBytes(root);
  const v1 = join(root, 'v1');
  if (existsSync(v1))
    for (const ns of readdirSync(v1, { withFileTypes: true })) {
      if (!ns.isDirectory()) continue;
      for (const k of ['seg', 'cat', 'rollup']) {
        const b = dirBytes(join(v1, ns.name, k));
        out[k].bytes += b.bytes;
        out[k].files += b.files;
      }
    }
  out.other = { bytes: total.bytes - out.seg.bytes - out.cat.bytes - out.rollup.bytes, files: total.files - out.seg.files - out.cat.files - out.rollup.files };
  return { ...out, total };
}

/** Segment and rollup objects the catalogs of every namespace under `root` name. */
function registeredBytes(root) {
  const out = { seg: { bytes: 0, files: 0 }, rollup: { bytes: 0, files: 0 } };
  const v1 = join(root, 'v1');
  if (existsSync(v1))
    for (const ns of readdirSync(v1, { withFileTypes: true })) {
      if (!ns.isDirectory()) continue;
      for (const [k, dir] of [['seg', join(v1, ns.name, 'cat')], ['rollup', join(v1, ns.name, 'rollup', 'cat')]]) {
        const r = registered(dir);
        out[k].bytes += r.bytes;
        out[k].files += r.files;
      }
    }
  return out;
}

// ---------------------------------------------------------------- reads, parsed into records
/** S4 JSON answer (columns per series) → records; a field that is null/absent is left out of the record. */
function s4JsonRecords(buf) {
  const o = JSON.parse(buf.toString('utf8'));
  const out = [];
  for (const s of o.series) {
    const names = Object.keys(s.fields ?? {});
    const cols = names.map((n) => s.fields[n]);
    const machineTag = s.tags?.machine;
    for (let i = 0; i < s.ts.length; i++) {
      const rec = {};
      for (let f = 0; f < names.length; f++) {
        const v = cols[f][i];
        if (v !== null && v !== undefined) rec[names[f]] = v;
      }
      out.push({ machine: machineTag, ts: s.ts[i], rec });
    }
  }
  return out;
}
/** S4 NDJSON answer (one write-format sample per line) → records. */
function s4NdjsonRecords(buf) {
  const text = buf.toString('utf8');
  const out = [];
  let i = 0;
  while (i < text.length) {
    let j = text.indexOf('\n', i);
    if (j < 0) j = text.length;
    if (j > i) {
      const o = JSON.parse(text.slice(i, j));
      out.push({ machine: o.tags.machine, ts: o.ts, rec: o.fields });
    }
    i = j + 1;
  }
  return out;
}
function s4Path(params) {
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined) p.append(k, String(v));
  return `/v1/query?${p}`;
}

/** A projected field's value inside a record: 'imu.vibration' → rec.imu.vibration. */
function pick(rec, path) {
  let v = rec;
  for (const k of path.split('.')) v = v == null ? undefined : v[k];
  return v;
}

/**
 * The reads. Each S4 variant and the PG variant returns the records it parsed; `check` compares a
 * warm-up answer with the expected one (count, and for projections the values of the first record).
 */
function readDefs(p, sdk) {
  const m0 = machineName(0);
  const all = { from: p.start, to: p.end };
  const tenFrom = p.seconds >= 3600 ? p.start + 20 * 60_000 : p.start;
  const ten = { from: tenFrom, to: Math.min(p.end, tenFrom + 10 * 60_000) };
  const rangeLabel = p.seconds % 3600 === 0 ? `${p.seconds / 3600} h` : `${Math.round(p.seconds / 60)} min`;
  const tenLabel = `${Math.round((ten.to - ten.from) / 60_000)} min`;
  const pgOne = (sel, r) => `SELECT (extract(epoch from ts) * 1000)::int8, ${sel} FROM records WHERE machine = ${lit(m0)} AND ts >= ${iso(r.from)} AND ts < ${iso(r.to)} ORDER BY ts`;
  const pgRows = (conn, sql) => {
    const out = [];
    return conn.query(sql, (v) => out.push({ ts: Number(v[0]), rec: v[1] === null ? null : JSON.parse(v[1]) })).then(() => out);
  };
  const s4Get = (url, path, parse) => async () => {
    const r = await request(url + path);
    if (r.status !== 200) throw Object.assign(new Error(`${r.status}: ${r.body.toString().slice(0, 300)}`), { status: r.status });
    return { bytes: r.body.length, records: parse(r.body) };
  };
  // NDJSON parsed a line at a time as the answer arrives, as an NDJSON consumer reads it (and as
  // the PostgreSQL client parses rows while they arrive): the server's writing and the client's
  // parsing overlap instead of following each other.
  const streamAgent = agent(4);
  const s4Stream = (url, path) => () =>
    new Promise((resolve, reject) => {
      http
        .get(url + path, { agent: streamAgent }, (res) => {
          const out = [];
          let bytes = 0;
          let rest = '';
          const dec = new StringDecoder('utf8');
          const lines = (text, last) => {
            let i = 0;
            for (let j = text.indexOf('\n'); j >= 0; j = text.indexOf('\n', i)) {
              if (j > i) {
                const o = JSON.parse(text.slice(i, j));
                out.push({ machine: o.tags.machine, ts: o.ts, rec: o.fields });
              }
              i = j + 1;
            }
            rest = text.slice(i);
            if (last && rest) lines(`${rest}\n`, false);
          };
          res.on('data', (chunk) => {
            bytes += chunk.length;
            if (res.statusCode === 200) lines(rest + dec.write(chunk), false);
            else rest += dec.write(chunk);
          });
          res.on('end', () => {
            if (res.statusCode !== 200) return reject(Object.assign(new Error(`${res.statusCode}: ${rest.slice(0, 300)}`), { status: res.statusCode }));
            lines(rest + dec.end(), true);
            resolve({ bytes, records: out });
          });
          res.on('error', reject);
        })
        .on('error', reject);
    });
  // client.records(): chunks of columns, every record built (records()) before the clock stops.
  const sdkQuery = (spec) => async () => {
    const out = [];
    for await (const chunk of sdk.records({ metric: spec.metric, tags: spec.tags }, { from: spec.from, to: spec.to })) {
      const machine = chunk.tags.machine;
      for (const r of chunk.records()) out.push({ machine, ts: r.ts, rec: r.fields });
    }
    return { bytes: null, records: out };
  };
  // The same answer kept as columns: one path read with chunk.column() (no record built).
  const sdkColumn = (spec, path) => async () => {
    const out = [];
    for await (const chunk of sdk.records({ metric: spec.metric, tags: spec.tags }, { from: spec.from, to: spec.to })) {
      const col = chunk.column(path);
      for (let i = 0; i < chunk.length; i++) out.push({ ts: chunk.ts[i], v: col[i] });
    }
    return { bytes: null, records: out };
  };
  const expectOne = countRecords(p, all.from, all.to, 0);
  const expectTen = countRecords(p, ten.from, ten.to);
  const firstRec = () => machineRecords(p, 0, all.from, all.to)[0];
  const countCheck = (n) => (recs) => (recs.length === n ? null : `expected ${n} records, got ${recs.length}`);
  const projCheck = (path) => (recs, isPg) => {
    if (recs.length !== expectOne) return `expected ${expectOne} records, got ${recs.length}`;
    const want = pick(firstRec().rec, path);
    const got = isPg ? recs[0].rec : pick(recs[0].rec, path);
    const nonNull = recs.filter((r) => (isPg ? r.rec : pick(r.rec, path)) != null).length;
    if (nonNull !== expectOne) return `${nonNull} of ${expectOne} records hold ${path}`;
    const d = jsonDiff(want, got);
    return d ? `first record's ${path} differs at ${d.path}: ${JSON.stringify(d.expected)} vs ${JSON.stringify(d.actual)}` : null;
  };
  return [
    {
      id: 'R1',
      title: `one machine × ${rangeLabel}, whole records`,
      target: { ms: 50 },
      expect: expectOne,
      s4: [
        { how: 'json', make: (url) => s4Get(url, s4Path({ metric: METRIC, tag: `machine:${m0}`, ...all, format: 'json' }), s4JsonRecords) },
        { how: 'ndjson', make: (url) => s4Get(url, s4Path({ metric: METRIC, tag: `machine:${m0}`, ...all, format: 'ndjson' }), s4NdjsonRecords) },
        { how: 'ndjson parsed as it arrives', make: (url) => s4Stream(url, s4Path({ metric: METRIC, tag: `machine:${m0}`, ...all, format: 'ndjson' })) },
        { how: 'sdk', make: () => sdkQuery({ metric: METRIC, tags: { machine: m0 }, ...all }) },
      ],
      pg: { how: 'SELECT ts, rec … WHERE machine AND ts range ORDER BY ts', run: (conn) => pgRows(conn, pgOne('rec', all)) },
      check: countCheck(expectOne),
    },
    {
      id: 'R2',
      title: `one machine × ${rangeLabel}, one field projected (imu)`,
      target: { ms: 10 },
      expect: expectOne,
      s4: [{ how: 'json fields=imu', make: (url) => s4Get(url, s4Path({ metric: METRIC, tag: `machine:${m0}`, ...all, fields: 'imu', format: 'json' }), s4JsonRecords) }],
      pg: { how: "rec->'imu'", run: (conn) => pgRows(conn, pgOne("rec->'imu'", all)) },
      check: projCheck('imu'),
    },
    {
      id: 'R3',
      title: `one machine × ${rangeLabel}, one leaf projected (imu.vibration)`,
      target: { ms: 10 },
      expect: expectOne,
      s4: [{ how: 'json fields=imu.vibration', make: (url) => s4Get(url, s4Path({ metric: METRIC, tag: `machine:${m0}`, ...all, fields: 'imu.vibration', format: 'json' }), s4JsonRecords) }],
      pg: { how: "rec->'imu'->'vibration'", run: (conn) => pgRows(conn, pgOne("rec->'imu'->'vibration'", all)) },
      check: projCheck('imu.vibration'),
    },
    {
      id: 'R4',
      title: `all ${p.machines} machines × ${tenLabel}, whole records`,
      target: { ms: 1000, sdkMs: 350 },
      expect: expectTen,
      s4: [
        { how: 'json', make: (url) => s4Get(url, s4Path({ metric: METRIC, ...ten, format: 'json' }), s4JsonRecords) },
        { how: 'ndjson', make: (url) => s4Get(url, s4Path({ metric: METRIC, ...ten, format: 'ndjson' }), s4NdjsonRecords) },
        { how: 'ndjson parsed as it arrives', make: (url) => s4Stream(url, s4Path({ metric: METRIC, ...ten, format: 'ndjson' })) },
        { how: 'sdk', make: () => sdkQuery({ metric: METRIC, ...ten }) },
        { how: 'sdk column(imu.vibration)', make: () => sdkColumn({ metric: METRIC, ...ten }, 'imu.vibration') },
      ],
      pg: {
        how: 'SELECT machine, ts, rec … WHERE ts range ORDER BY machine, ts',
        run: (conn) => {
          const out = [];
          const sql = `SELECT machine, (extract(epoch from ts) * 1000)::int8, rec FROM records WHERE ts >= ${iso(ten.from)} AND ts < ${iso(ten.to)} ORDER BY machine, ts`;
          return conn.query(sql, (v) => out.push({ machine: v[0], ts: Number(v[1]), rec: JSON.parse(v[2]) })).then(() => out);
        },
      },
      check: countCheck(expectTen),
      range: ten,
    },
  ];
}

async function timedRun(fn) {
  // The previous read's garbage (up to ~350 MB of held records) collected before the clock starts, so
  // that no variant, S4's or PostgreSQL's, pays for the one before it (run.sh starts node with --expose-gc;
  // meta.heapCollectedBeforeReads says whether it did).
  globalThis.gc?.();
  const t0 = performance.now();
  const r = await fn();
  return { ms: performance.now() - t0, ...r };
}

/** Warm-up once (checked), then `repeats` rounds; in each round every S4 variant, then PostgreSQL. */
async function runReads(s4, pgConn, p, sdk) {
  const out = {};
  for (const def of readDefs(p, sdk)) {
    const res = { title: def.title, target: def.target, expect: def.expect, s4: {}, pg: null };
    const runners = [];
    for (const v of def.s4) {
      const fn = v.make(s4.url);
      let warm;
      try {
        warm = await timedRun(fn);
      } catch (e) {
        const status = e.status ?? e.cause?.status;
        res.s4[v.how] = { na: status === 400 || status === 404 ? `n/a: not supported (${status})` : `error: ${e.message.slice(0, 200)}`, detail: e.message.slice(0, 400) };
        log(`${def.id} S4 ${v.how}: ${res.s4[v.how].na}`);
        continue;
      }
      const problem = def.check(warm.records, false);
      if (problem) {
        // a 200 whose records lack the projected path: the projection is not supported (yet)
        const missing = / of \d+ records hold /.test(problem);
        res.s4[v.how] = { na: missing ? `n/a: not supported (200, but ${problem})` : `wrong answer: ${problem}`, records: warm.records.length, bytes: warm.bytes };
        log(`${def.id} S4 ${v.how}: ${problem}`);
        continue;
      }
      const acc = { ms: [], bytes: warm.bytes, records: warm.records.length };
      res.s4[v.how] = acc;
      runners.push(async () => acc.ms.push((await timedRun(fn)).ms));
    }
    {
      const fn = () => def.pg.run(pgConn).then((records) => ({ bytes: null, records }));
      const warm = await timedRun(fn);
      const problem = def.check(warm.records, true);
      if (problem) throw new Error(`PostgreSQL ${def.id}: ${problem}`);
      const acc = { how: def.pg.how, ms: [], records: warm.records.length };
      res.pg = acc;
      runners.push(async () => acc.ms.push((await timedRun(fn)).ms));
    }
    for (let i = 0; i < K.repeats; i++) for (const run of runners) await run();
    for (const a of [...Object.values(res.s4), res.pg]) if (a?.ms) a.latency = summary(a.ms);
    out[def.id] = res;
    log(`${def.id} ${def.title}: ${Object.entries(res.s4).map(([h, a]) => `S4 ${h} ${a.latency ? `${a.latency.median.toFixed(1)} ms` : a.na}`).join(', ')}; PG ${res.pg.latency.median.toFixed(1)} ms (${res.pg.records} records)`);
  }
  return out;
}

/** Every record of a sample of machines, read back whole from S4 (and PostgreSQL), deep-equal to what was written. */
async function verify(s4url, pgConn, p) {
  const n = Math.min(p.machines, K.verifyMachines);
  const pickM = Array.from({ length: n }, (_, i) => Math.floor((i * p.machines) / n));
  const res = { machines: pickM.map(machineName), records: 0, s4: { mismatches: 0, first: null }, pg: { mismatches: 0, first: null } };
  for (const m of pickM) {
    const want = machineRecords(p, m);
    res.records += want.length;
    const r = await ok(`${s4url}${s4Path({ metric: METRIC, tag: `machine:${machineName(m)}`, from: p.start, to: p.end, format: 'json' })}`);
    const got = s4JsonRecords(r.body);
    const pgGot = [];
    await pgConn.query(`SELECT (extract(epoch from ts) * 1000)::int8, rec FROM records WHERE machine = ${lit(machineName(m))} ORDER BY ts`, (v) => pgGot.push({ ts: Number(v[0]), rec: JSON.parse(v[1]) }));
    for (const [sys, list] of [['s4', got], ['pg', pgGot]]) {
      const acc = res[sys];
      if (list.length !== want.length) {
        acc.mismatches += Math.abs(list.length - want.length);
        acc.first ??= `${machineName(m)}: ${list.length} records read, ${want.length} written`;
      }
      for (let i = 0; i < Math.min(list.length, want.length); i++) {
        const d = list[i].ts !== want[i].ts ? { path: 'ts', expected: want[i].ts, actual: list[i].ts } : jsonDiff(want[i].rec, list[i].rec);
        if (d) {
          acc.mismatches++;
          acc.first ??= `${machineName(m)} ts ${want[i].ts}: ${d.path}: wrote ${JSON.stringify(d.expected)?.slice(0, 120)}, read ${JSON.stringify(d.actual)?.slice(0, 120)}`;
        }
      }
    }
  }
  return res;
}

// ---------------------------------------------------------------- helpers
function git(args) {
  try {
    return execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return 'unknown';
  }
}
function pidFile(f) {
  try {
    return Number(readFileSync(f, 'utf8').trim()) || null;
  } catch {
    return null;
  }
}
const postJson = async (url) => JSON.parse((await ok(url, { method: 'POST' })).body.toString() || '{}');

// ---------------------------------------------------------------- main
async function main() {
  mkdirSync(WORK, { recursive: true });
  const started = new Date();
  const meta = {
    workload: 'records',
    date: started.toISOString(),
    commit: git(['rev-parse', '--short', 'HEAD']),
    dirty: git(['status', '--porcelain', '--untracked-files=no']) !== '',
    machine: machine(),
    command: env.BENCH_COMMAND || 'npm run bench -- records',
    knobs: K,
    // Whether timedRun could collect the heap before each read (node --expose-gc, as run.sh starts it).
    heapCollectedBeforeReads: typeof globalThis.gc === 'function',
    pg: { version: pgVersion(), port: K.pgPort },
  };
  log('machine', JSON.stringify(meta.machine), 'knobs', JSON.stringify(K));

  // the last `hours` before the start of the current hour: recent, every window closed
  const end = Math.floor(Date.now() / HOUR) * HOUR;
  const p = plan({ machines: K.machines, seconds: Math.round(K.hours * 3600), end });
  let t = performance.now();
  const enc = encodeBatches(p);
  meta.dataset = {
    machines: p.machines,
    seconds: p.seconds,
    records: p.records,
    start: new Date(p.start).toISOString(),
    end: new Date(p.end).toISOString(),
    jsonBytes: enc.jsonBytes,
    recordBytes: { min: enc.recordBytes.min, mean: Math.round(enc.recordBytes.mean), max: enc.recordBytes.max },
    batches: enc.batches.length,
    s4BodyBytes: enc.s4Bytes,
    pgCopyBytes: enc.pgBytes,
    encodeMs: Math.round(performance.now() - t),
  };
  log('dataset', JSON.stringify(meta.dataset));

  const results = { meta, pg: {}, modes: {} };
  const children = [];
  let pgConn = null;
  const pgPeak = { rss: 0, pss: 0, hwmSum: 0, processes: 0 };
  const sampler = setInterval(() => {
    const m = pgMemory();
    if (m) for (const k of Object.keys(pgPeak)) pgPeak[k] = Math.max(pgPeak[k], m[k]);
  }, 250);
  sampler.unref();
  const cleanup = async () => {
    clearInterval(sampler);
    for (const c of children.reverse()) await stop(c).catch(() => {});
    pgConn?.end();
    stopPg();
  };
  process.on('SIGINT', () => cleanup().then(() => process.exit(130)));
  process.on('SIGTERM', () => cleanup().then(() => process.exit(143)));

  const { S4Client } = await import(join(ROOT, 'apps/sdk/dist/esm/index.js'));
  try {
    // ---- PostgreSQL: load once (COPY per batch, one connection per client), VACUUM ANALYZE, size
    log(`PostgreSQL ${meta.pg.version}: initdb + start on port ${K.pgPort}`);
    pgConn = await startPg();
    const pgIn = batchReader(join(enc.dir, 'pg.copy-batches'));
    const pgLoad = await pool(enc.batches, K.ingestConcurrency, () => PgConn.connect({ port: K.pgPort }).then((c) => ({ c, close: () => c.end() })), (w, b) => w.c.copyIn('COPY records (machine, ts, rec) FROM STDIN', pgIn.read(b.pg)));
    pgIn.close();
    results.pg.ingest = ingestResult(pgLoad, enc, p.records, enc.pgBytes);
    log(`PG ingest ${results.pg.ingest.recordsPerSec.toFixed(0)} records/s, ${results.pg.ingest.jsonMBPerSec.toFixed(1)} MB/s JSON`);
    t = performance.now();
    await pgConn.query('VACUUM ANALYZE records');
    results.pg.vacuumMs = performance.now() - t;
    // PostgreSQL's deferred writes (the checkpoint of the load and VACUUM's hint bits, GBs of dirty
    // pages) and the kernel's writeback of them land now, not during S4's load and its fsync'd
    // log; timed and reported as PostgreSQL's.
    t = performance.now();
    await pgConn.query('CHECKPOINT');
    settleDisk();
    results.pg.checkpointMs = performance.now() - t;
    log(`PG VACUUM ANALYZE ${results.pg.vacuumMs.toFixed(0)} ms, CHECKPOINT + sync ${results.pg.checkpointMs.toFixed(0)} ms`);
    const [row] = await pgConn.rows("SELECT pg_total_relation_size('records'), pg_relation_size('records'), pg_indexes_size('records'), pg_table_size('records') - pg_relation_size('records'), (SELECT count(*) FROM records)");
    const [total, heap, indexes, toast, count] = row.map(Number);
    if (count !== p.records) throw new Error(`PostgreSQL holds ${count} records, ${p.records} were written`);
    results.pg.bytes = { total, heap, indexes, toastAndMaps: toast, perRecord: total / p.records };
    log(`PG bytes ${JSON.stringify(results.pg.bytes)}`);

    // ---- S4 modes
    for (const mode of K.modes) {
      log(`S4 mode ${mode}`);
      // The previous mode's files (and PostgreSQL's) written back before this mode's clock starts.
      settleDisk();
      const s4 = await startS4(mode);
      children.push(s4.child);
      // One immediate retry: on a loaded machine the client can be busy parsing a large answer while
      // the server closes its idle keep-alive connection (65 s), and the next SDK query, sent on that
      // socket, then fails with "other side closed" (seen at load ~13). A retried query's time
      // includes the failed attempt; anything failing twice still fails the row.
      const sdk = new S4Client({ url: s4.url, retry: { retries: 1, minDelayMs: 0, maxDelayMs: 0 } });
      const m = (results.modes[mode] = { env: Object.fromEntries(Object.entries(s4Env(mode, s4.dataDir)).filter(([k]) => !k.startsWith('AWS_'))) });
      const s4In = batchReader(join(enc.dir, 's4.json-batches'));
      const load = await pool(enc.batches, K.ingestConcurrency, () => ({}), (_, b) => ok(`${s4.url}/v1/write`, { method: 'POST', body: s4In.read(b.s4), headers: { 'content-type': 'application/json' } }));
      s4In.close();
      m.ingest = ingestResult(load, enc, p.records, enc.s4Bytes);
      m.memAfterIngest = memory(s4.child.pid);
      log(`S4 ${mode} ingest ${m.ingest.recordsPerSec.toFixed(0)} records/s, ${m.ingest.jsonMBPerSec.toFixed(1)} MB/s JSON`);

      // flush what the periodic flusher has not flushed yet, then rollups (the worker also runs)
      const objRoot = mode === 'redis+s3' ? join(env.BENCH_S3_DATA_DIR || '', BUCKET) : join(s4.dataDir, 'objects');
      t = performance.now();
      m.flush = { ...(await postJson(`${s4.url}/v1/admin/flush`)) };
      m.flush.ms = performance.now() - t;
      m.flush.leftAfter = await postJson(`${s4.url}/v1/admin/flush`);
      t = performance.now();
      const rr = await request(`${s4.url}/v1/admin/rollup`, { method: 'POST' });
      m.rollup = rr.status === 200 ? { ms: performance.now() - t, ...JSON.parse(rr.body.toString()) } : { na: `n/a (${rr.status})` };
      const flushed = objectBytes(objRoot);
      // At rest: what the compactor (on by default) makes of the hours once settled, folded now
      // rather than at its next pass; then the rollups of the folded parts. Counted as S4 counts
      // it, the objects the catalogs name: replaced parts wait out their delete grace on disk.
      t = performance.now();
      const cr = await request(`${s4.url}/v1/admin/compact`, { method: 'POST' });
      m.compact = cr.status === 200 ? { ms: performance.now() - t, ...JSON.parse(cr.body.toString()) } : { na: `n/a (${cr.status})` };
      await request(`${s4.url}/v1/admin/rollup`, { method: 'POST' });
      const ob = objectBytes(objRoot);
      const named = registeredBytes(objRoot);
      m.bytes = {
        where: mode === 'redis+s3' ? 'versitygw data dir of the bucket' : '$S4_DATA_DIR/objects',
        segments: named.seg,
        catalogs: ob.cat,
        rollups: named.rollup,
        other: ob.other,
        perRecord: (named.seg.bytes + ob.cat.bytes) / p.records,
        rollupsPerRecord: named.rollup.bytes / p.records,
        // Every file on disk right after the flush, before the fold (parts an earlier pass of the compactor replaced included).
        afterFlush: { segments: flushed.seg, catalogs: flushed.cat, perRecord: (flushed.seg.bytes + flushed.cat.bytes) / p.records },
        hotAfterFlush: mode === 'embedded' ? dirBytes(join(s4.dataDir, 'hot')).bytes : null,
      };
      log(`S4 ${mode} flush ${m.flush.ms.toFixed(0)} ms, compact ${JSON.stringify(m.compact)}; bytes/record ${m.bytes.perRecord.toFixed(1)} (+ rollups ${m.bytes.rollupsPerRecord.toFixed(1)}; ${m.bytes.afterFlush.perRecord.toFixed(1)} on disk after the flush): ${JSON.stringify({ named, ob, flushed })}`);

      m.reads = await runReads(s4, pgConn, p, sdk);
      m.exact = await verify(s4.url, pgConn, p);
      log(`exactness: ${m.exact.records} records of ${m.exact.machines.length} machines; S4 mismatches ${m.exact.s4.mismatches}${m.exact.s4.first ? ` (${m.exact.s4.first})` : ''}; PG ${m.exact.pg.mismatches}`);
      m.memory = { s4: memory(s4.child.pid), pg: { ...pgPeak, now: pgMemory() } };
      if (mode === 'redis+s3') {
        m.memory.redis = memory(pidFile(env.BENCH_REDIS_PIDFILE));
        m.memory.s3server = memory(pidFile(env.BENCH_S3_PIDFILE));
      }
      log(`S4 ${mode} memory ${JSON.stringify(m.memory)}`);
      await stop(s4.child);
      children.splice(children.indexOf(s4.child), 1);
    }
    results.pg.memory = { ...pgPeak };
    results.finished = new Date().toISOString();
  } finally {
    await cleanup();
    rmSync(enc.dir, { recursive: true, force: true });
  }

  // ---- output
  const stamp = meta.date.replace(/[:.]/g, '-').slice(0, 19);
  mkdirSync(join(WORK, 'results'), { recursive: true });
  const json = JSON.stringify(results, (k, v) => (k === 'ms' && Array.isArray(v) ? v.map((x) => Math.round(x * 100) / 100) : v), 2);
  writeFileSync(join(WORK, 'results', `records-${stamp}.json`), json);
  if (K.writeDoc) {
    mkdirSync(join(ROOT, 'docs/bench-results'), { recursive: true });
    writeFileSync(join(ROOT, 'docs/bench-results/records-latest.json'), json);
    renderRecordsDoc(join(ROOT, 'docs/benchmarks.md'), results);
    log('wrote docs/bench-results/records-latest.json and the records section of docs/benchmarks.md');
  }
  log(`results: ${join(WORK, 'results', `records-${stamp}.json`)}`);
}

main().catch((e) => {
  console.error(e);
  stopPg();
  process.exit(1);
});
