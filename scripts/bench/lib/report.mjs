// Renders the results table into docs/benchmarks.md between <!-- bench:start --> and <!-- bench:end -->.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';

const START = '<!-- bench:start -->';
const END = '<!-- bench:end -->';

const rate = (x) => (x == null || !isFinite(x) ? '—' : x >= 1e6 ? `${(x / 1e6).toFixed(2)} M/s` : x >= 1e3 ? `${(x / 1e3).toFixed(1)} k/s` : `${x.toFixed(0)}/s`);
const ms = (x) => (x == null || !isFinite(x) ? '—' : x >= 100 ? `${x.toFixed(0)}` : x >= 10 ? `${x.toFixed(1)}` : `${x.toFixed(2)}`);
const lat = (s) => (s ? `${ms(s.median)} ms (${ms(s.min)}–${ms(s.max)})` : '—');
const bytes = (b) => (b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const ratio = (r) => (r == null || !isFinite(r) ? '—' : r.toFixed(2));
const met = (r, target, higherIsBetter) => (r == null || !isFinite(r) || target == null ? '' : (higherIsBetter ? r >= target : r <= target) ? 'met' : '**unmet**');

function modeTable(mode, m, vm, ds) {
  const rows = [];
  const row = (figure, s4, v, r, target, higher) =>
    rows.push(`| ${figure} | ${s4} | ${v} | ${ratio(r)} | ${target == null ? '' : `${higher ? '≥' : '≤'} ${target}`} | ${met(r, target, higher)} |`);
  const ing = m.ingest;
  row(
    'bulk ingest, samples/s (whole load; per-hour min–max)',
    `${rate(ing.samplesPerSec)} (${rate(ing.perHour?.min)}–${rate(ing.perHour?.max)})`,
    `${rate(vm.ingest.samplesPerSec)} (${rate(vm.ingest.perHour?.min)}–${rate(vm.ingest.perHour?.max)})`,
    ing.samplesPerSec / vm.ingest.samplesPerSec,
    1.0,
    true,
  );
  if (m.flush) {
    row('flush to object store (S4) / force_flush (VM), once', `${ms(m.flush.ms)} ms (${m.flush.objects} objects)`, `${ms(vm.flushMs)} ms`, null);
    if (m.rollup) row('rollup build (S4 POST /v1/admin/rollup), once', m.rollup.na ?? `${ms(m.rollup.ms)} ms`, '—', null);
    if (m.bytesSegmentsOnly != null) row('bytes/sample, S4 segments + catalogs only (before rollups)', (m.bytesSegmentsOnly / ds.samples).toFixed(3), `${(vm.bytesAfterMerge.bytes / ds.samples).toFixed(3)}`, m.bytesSegmentsOnly / vm.bytesAfterMerge.bytes, null);
    row(`bytes/sample at rest${m.bytesSegmentsOnly != null ? ', S4 with rollups' : ''} (VM after force_merge)`, `${(m.bytesPerSample).toFixed(3)} (${bytes(m.bytes.bytes)}, ${m.bytes.files} files)`, `${(vm.bytesAfterMerge.bytes / ds.samples).toFixed(3)} (${bytes(vm.bytesAfterMerge.bytes)})`, m.bytesPerSample / (vm.bytesAfterMerge.bytes / ds.samples), 1.0, false);
    row('bytes/sample (VM right after force_flush, before merge)', `${(m.bytesPerSample).toFixed(3)}`, `${(vm.bytesAfterFlush.bytes / ds.samples).toFixed(3)} (${bytes(vm.bytesAfterFlush.bytes)})`, m.bytesPerSample / (vm.bytesAfterFlush.bytes / ds.samples), null);
  }
  for (const [id, qr] of Object.entries(m.queries ?? {})) {
    for (const [format, a] of Object.entries(qr.s4)) {
      const label = `${id} ${qr.title}${Object.keys(qr.s4).length > 1 || id === 'Q1' || id === 'Q2' ? `, S4 ${format}` : ''}`;
      const v = qr.vm;
      if (a.na) {
        row(label, a.na, v ? lat(v.latency) : '—', null, qr.target, false);
        continue;
      }
      const pts = `${a.points} pts, ${rate(a.pointsPerSec).replace('/s', ' pts/s')}`;
      const vpts = v ? `${v.points} pts, ${rate(v.pointsPerSec).replace('/s', ' pts/s')}` : '';
      row(`${label}`, `${lat(a.latency)}; ${pts}; ${bytes(a.bytes)}`, v ? `${lat(v.latency)}; ${vpts}; ${bytes(v.bytes)}` : '—', v ? a.latency.median / v.latency.median : null, v ? qr.target : null, false);
    }
  }
  if (m.single) {
    const s = m.single.s4;
    const v = m.single.vm;
    row(`single-sample ingest, ${s.samples} / ${v.samples} requests, samples/s`, rate(s.samplesPerSec), rate(v.samplesPerSec), s.samplesPerSec / v.samplesPerSec, 1.0, true);
    row('single-sample ingest latency p50 / p99', `${ms(s.p50)} / ${ms(s.p99)} ms${s.errors ? ` (${s.errors} errors)` : ''}`, `${ms(v.p50)} / ${ms(v.p99)} ms${v.errors ? ` (${v.errors} errors)` : ''}`, null);
  }
  if (m.memory) {
    const s4 = m.memory.s4?.hwm ?? NaN;
    const redis = m.memory.redis?.hwm ?? 0;
    const v = m.memory.vm?.hwm ?? NaN;
    const label = m.memory.redis ? 'peak RSS: S4 API + redis-server (VmHWM)' : 'peak RSS: S4 process (VmHWM)';
    const s4txt = m.memory.redis ? `${bytes(s4 + redis)} (S4 ${bytes(s4)} + Redis ${bytes(redis)}; versitygw ${bytes(m.memory.s3server?.hwm ?? 0)} not counted)` : bytes(s4);
    row(label, s4txt, bytes(v), (s4 + redis) / v, 1.5, false);
  }
  return [`#### ${mode}${mode === 'embedded-fsync-never' ? ' (ingest only; S4_EMBEDDED_FSYNC=never)' : ''}`, '', '| figure | S4 | VictoriaMetrics | S4/VM | target | |', '|---|---|---|---|---|---|', ...rows, ''].join('\n');
}

export function renderTable(res) {
  const { meta } = res;
  const ds = meta.dataset;
  const lines = [
    `Run of ${meta.date.slice(0, 16).replace('T', ' ')} UTC on commit \`${meta.commit}\`${meta.dirty ? ' (with uncommitted changes)' : ''}; command \`${meta.command}\`.`,
    '',
    `- Machine: ${meta.machine.cpu}, ${meta.machine.cores} cores, ${meta.machine.ramGiB} GiB RAM; Node ${meta.machine.node}; VictoriaMetrics ${meta.vm.version} (Debian package).`,
    `- Dataset: ${ds.sensors} sensors × 1 Hz × ${ds.hours} h = ${ds.samples.toLocaleString('en-US')} samples (${ds.jittered.toLocaleString('en-US')} jittered, ${ds.missing.toLocaleString('en-US')} missing), ${ds.batches} write batches of ~${ds.samplesPerBatch.toLocaleString('en-US')} samples, ${meta.knobs.ingestConcurrency} in flight.`,
    `- Queries: 1 warm-up, then ${meta.knobs.repeats} rounds alternating S4 and VM; median (min–max) client time including transfer and parsing into numbers. Single-sample ingest: ${meta.knobs.singleClients} keep-alive clients × ${meta.knobs.singleSeconds} s.`,
    `- S4 bulk write body: \`${meta.s4WriteForm}\` (fastest of the probe below). VM bulk body: \`/api/v1/import\` JSON lines.`,
  ];
  const builds = [...new Set(Object.values(res.modes).map((m) => m.build).filter(Boolean))];
  if (builds.length > 1) lines.push(`- **Warning:** the built server changed during the run (newest dist file per mode: ${Object.entries(res.modes).map(([k, m]) => `${k} ${m.build}`).join(', ')}); a concurrent build replaced it, so the modes did not run the same code.`);
  lines.push('');
  for (const [mode, m] of Object.entries(res.modes)) lines.push(modeTable(mode, m, res.vm, ds));
  if (res.probe) {
    lines.push('#### S4 write body forms (probe on a scratch embedded server, first batches of the dataset)', '', '| body | samples/s | body bytes | client encode ms |', '|---|---|---|---|');
    for (const [form, p] of Object.entries(res.probe)) lines.push(`| ${form} | ${p.error ? `error: ${p.error.replace(/\|/g, '/').slice(0, 160)}` : rate(p.samplesPerSec)} | ${p.bytes ? bytes(p.bytes) : ''} | ${p.clientEncodeMs ? p.clientEncodeMs.toFixed(0) : ''} |`);
    lines.push('');
  }
  const profiled = Object.entries(res.modes).filter(([, m]) => m.profile);
  for (const [mode, m] of profiled) {
    lines.push(`#### CPU profile of the S4 server, ${mode} (whole run, top self time)`, '', '| self % | ms | function |', '|---|---|---|');
    for (const r of m.profile.top.slice(0, 15)) lines.push(`| ${r.pct} | ${r.ms} | \`${r.fn}\` |`);
    lines.push('');
  }
  lines.push(`Raw figures: [docs/bench-results/latest.json](bench-results/latest.json).`);
  return lines.join('\n');
}

export function renderDoc(path, res) {
  const table = `${START}\n${renderTable(res)}\n${END}`;
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : `# Benchmarks\n\n${START}\n${END}\n`;
  const a = doc.indexOf(START);
  const b = doc.indexOf(END);
  doc = a >= 0 && b > a ? doc.slice(0, a) + table + doc.slice(b + END.length) : `${doc.trimEnd()}\n\n${table}\n`;
  writeFileSync(path, doc);
}
