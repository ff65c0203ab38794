// Renders the records workload's table into docs/benchmarks.md between
// <!-- bench:records:start --> and <!-- bench:records:end --> (a section is appended when missing).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const START = '<!-- bench:records:start -->';
const END = '<!-- bench:records:end -->';

const fin = (x) => x != null && Number.isFinite(x);
const int = (x) => (fin(x) ? Math.round(x).toLocaleString('en-US') : '—');
const ms = (x) => (!fin(x) ? '—' : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) : x.toFixed(2));
const lat = (s) => (s ? `${ms(s.median)} ms (${ms(s.min)}–${ms(s.max)})` : '—');
const bytes = (b) => (!fin(b) ? '—' : b >= 2 ** 30 ? `${(b / 2 ** 30).toFixed(2)} GiB` : b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const ratio = (a, b) => (fin(a) && fin(b) && b !== 0 ? (a / b).toFixed(2) : '—');
const verdict = (v, target, higherIsBetter) => (!fin(v) ? '' : (higherIsBetter ? v >= target : v <= target) ? 'met' : '**unmet**');

function modeTable(mode, m, pg, ds) {
  const rows = [];
  const row = (figure, s4, p, r, target, met) => rows.push(`| ${figure} | ${s4} | ${p} | ${r} | ${target ?? ''} | ${met ?? ''} |`);
  const ing = m.ingest;
  const pgi = pg.ingest;
  row(
    'ingest, records/s (JSON MB/s)',
    `${int(ing.recordsPerSec)} (${ing.jsonMBPerSec.toFixed(1)} MB/s)`,
    `${int(pgi.recordsPerSec)} (${pgi.jsonMBPerSec.toFixed(1)} MB/s)`,
    ratio(ing.recordsPerSec, pgi.recordsPerSec),
    '≥ 25,000 records/s',
    verdict(ing.recordsPerSec, 25_000, true),
  );
  row('ingest, one batch p50 / p99', `${ms(ing.batchP50)} / ${ms(ing.batchP99)} ms`, `${ms(pgi.batchP50)} / ${ms(pgi.batchP99)} ms`, '—');
  const b = m.bytes;
  row(
    'bytes/record at rest: S4 segments the catalogs name + catalogs, after the compactor\'s fold; PG pg_total_relation_size after VACUUM ANALYZE',
    `${b.perRecord.toFixed(1)} (${bytes(b.segments.bytes + b.catalogs.bytes)}, ${b.segments.files + b.catalogs.files} objects)`,
    `${pg.bytes.perRecord.toFixed(1)} (${bytes(pg.bytes.total)}: heap ${bytes(pg.bytes.heap)}, TOAST+maps ${bytes(pg.bytes.toastAndMaps)}, index ${bytes(pg.bytes.indexes)})`,
    ratio(b.perRecord, pg.bytes.perRecord),
    '≤ 100',
    verdict(b.perRecord, 100, false),
  );
  if (b.afterFlush) row('bytes/record on disk after the flush, before the fold (S4 segments + catalogs)', `${b.afterFlush.perRecord.toFixed(1)} (${bytes(b.afterFlush.segments.bytes + b.afterFlush.catalogs.bytes)}, ${b.afterFlush.segments.files + b.afterFlush.catalogs.files} objects)`, '—', '—');
  if (m.compact && !m.compact.na) row('S4 compaction after the flush, once', `${ms(m.compact.ms)} ms (${m.compact.windows ?? '?'} windows folded)`, '—', '—');
  row('bytes/record of S4 rollups (separately)', `${b.rollupsPerRecord.toFixed(1)} (${bytes(b.rollups.bytes)}, ${b.rollups.files} objects)`, '—', '—');
  row('S4 flush after the load (the periodic flusher ran during it), once', `${ms(m.flush.ms)} ms (${m.flush.objects ?? '?'} objects, ${int(m.flush.samples)} records)`, '—', '—');
  const targetOf = (def, how) => (how.startsWith('sdk') && def.target.sdkMs ? def.target.sdkMs : def.target.ms);
  for (const [id, def] of Object.entries(m.reads)) {
    const pl = def.pg?.latency;
    const variants = Object.entries(def.s4);
    variants.forEach(([how, a], i) => {
      const label = `${id} ${def.title}, S4 ${how === 'sdk' ? 'SDK records() (msgpack columns)' : how.startsWith('sdk ') ? `SDK ${how.slice(4)}` : how}`;
      const pgCell = i === 0 ? `${lat(pl)}; ${int(def.pg.records)} records; \`${def.pg.how}\`` : '″';
      const tms = targetOf(def, how);
      const target = `≤ ${tms >= 1000 ? `${tms / 1000} s` : `${tms} ms`}`;
      if (a.na) row(label, a.na.replace(/\|/g, '/'), pgCell, '—', target, '**unmet**');
      else row(label, `${lat(a.latency)}; ${int(a.records)} records${a.bytes ? `; ${bytes(a.bytes)}` : ''}`, pgCell, ratio(a.latency.median, pl?.median), target, verdict(a.latency.median, tms, false));
    });
  }
  const mem = m.memory;
  const s4hwm = mem.s4?.hwm;
  const pgm = mem.pg;
  const redis = mem.redis ? `; Redis ${bytes(mem.redis.hwm)}, versitygw ${bytes(mem.s3server?.hwm)} (not counted)` : '';
  row(
    `peak memory: S4 process VmHWM${mem.redis ? ' (+ Redis shown apart)' : ''}; PG peak of the summed PSS (RSS) of its ${pgm.processes} processes, sampled every 250 ms`,
    `${bytes(s4hwm)}${redis}`,
    `${bytes(pgm.pss)} (${bytes(pgm.rss)})`,
    ratio(s4hwm, pgm.pss),
    '≤ 1 GB',
    verdict(s4hwm, 1e9, false),
  );
  const ex = m.exact;
  row(
    `exactness: every record of ${ex.machines.length} machines read back and deep-compared`,
    `${int(ex.records)} records, ${ex.s4.mismatches} mismatches${ex.s4.first ? ` (first: ${ex.s4.first.replace(/\|/g, '/')})` : ''}`,
    `${int(ex.records)} records, ${ex.pg.mismatches} mismatches${ex.pg.first ? ` (first: ${ex.pg.first.replace(/\|/g, '/')})` : ''}`,
    '—',
    '0 mismatches',
    ex.s4.mismatches === 0 ? 'met' : '**unmet**',
  );
  return [`#### ${mode}`, '', '| figure | S4 | PostgreSQL | S4/PG | target (S4) | |', '|---|---|---|---|---|---|', ...rows, ''].join('\n');
}

export function renderRecordsTable(res) {
  const { meta } = res;
  const ds = meta.dataset;
  const full = ds.machines >= 300 && ds.seconds >= 7200;
  const span = ds.seconds % 3600 === 0 ? `${ds.seconds / 3600} h` : `${Math.round(ds.seconds / 60)} min`;
  const lines = [
    `Run of ${meta.date.slice(0, 16).replace('T', ' ')} UTC on commit \`${meta.commit}\`${meta.dirty ? ' (with uncommitted changes)' : ''}; command \`${meta.command}\`.`,
    '',
    `- Machine: ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.ramGiB} GiB RAM; Node ${meta.machine.node}; PostgreSQL ${meta.pg.version} (Debian package, default settings).`,
    `- Dataset: ${ds.machines} machines × 1 Hz × ${span} = ${ds.records.toLocaleString('en-US')} records (${ds.start.slice(0, 16).replace('T', ' ')}–${ds.end.slice(11, 16)} UTC), ${(ds.jsonBytes / 1e6).toFixed(1)} MB of JSON, ${ds.recordBytes.mean} B per record (${ds.recordBytes.min}–${ds.recordBytes.max}); ${ds.batches} batches of ${meta.knobs.batchRecords} records, ${meta.knobs.ingestConcurrency} clients.`,
    `- Reads: 1 warm-up (its answer checked), then ${meta.knobs.repeats} rounds, each S4 variant then PostgreSQL, ${meta.heapCollectedBeforeReads ? "the bench's heap collected before each read (no read pays for the garbage of the one before)" : "**without** a collection of the bench's heap between reads (node was started without --expose-gc)"}; median (min–max) client time until every record is parsed.`,
  ];
  if (!full) lines.push(`- **Small run** (${ds.machines} machines × ${span}): the targets are for the full size (300 machines × 2 h); read these figures as a check that the harness works.`);
  lines.push('');
  for (const [mode, m] of Object.entries(res.modes)) lines.push(modeTable(mode, m, res.pg, ds));
  lines.push('Raw figures: [docs/bench-results/records-latest.json](bench-results/records-latest.json).');
  return lines.join('\n');
}

export function renderRecordsDoc(path, res) {
  const table = `${START}\n${renderRecordsTable(res)}\n${END}`;
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : '# Benchmarks\n';
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  doc = a >= 0 && b > a ? doc.slice(0, a) + table + doc.slice(b + END.length) : `${doc.trimEnd()}\n\n## Records workload (issue 11)\n\n${table}\n`;
  writeFileSync(path, doc);
}
