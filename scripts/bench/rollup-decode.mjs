// What a rollup pass decodes from each block of a records segment, two ways, CPU per part: every
// record rebuilt (`decodeBlock`, what rollups read before) against the fields' numbers only
// (`numberColumns` of a ROOTS_ONLY decode, what they read now). Point it at segment objects a
// records run left (e.g. $BENCH_WORK/records-s4-embedded/objects/v1/default/seg):
//
//   npm run build --silent && node scripts/bench/rollup-decode.mjs DIR [parts=32] [rounds=3]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const { decodeBlock, decodeBlockColumns, decodeGroupColumns, groupsOf, numberColumns, readSegmentFooter, ROOTS_ONLY } = await import(join(root, 'libs/format/dist/index.js'));
const [dir, partsArg = '32', roundsArg = '3'] = process.argv.slice(2);
if (!dir) throw new Error('usage: rollup-decode.mjs SEGMENT_DIR [parts] [rounds]');

const files = [];
const walk = (d) => {
  for (const name of readdirSync(d)) {
    const p = join(d, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (p.endsWith('.s4seg')) files.push(p);
  }
};
walk(dir);
// The largest parts: a folded window's, as a rollup after compaction reads them.
const chosen = files.map((f) => ({ f, size: statSync(f).size })).sort((a, b) => b.size - a.size).slice(0, Number(partsArg));
const parts = chosen.map(({ f }) => {
  const bytes = new Uint8Array(readFileSync(f));
  return { bytes, footer: readSegmentFooter(bytes) };
});

const ways = {
  records: ({ bytes }, e) => decodeBlock(bytes.subarray(e.offset, e.offset + e.length), e).ts.length,
  numbers: ({ bytes }, e) => {
    const groups = groupsOf(e);
    const cols = groups[0] === -1 ? [numberColumns(decodeBlockColumns(bytes, e, ROOTS_ONLY, 0))] : groups.map((g) => numberColumns(decodeGroupColumns(bytes, e, g, ROOTS_ONLY, 0)));
    return cols.reduce((n, c) => n + c.ts.length, 0);
  },
};
let samples = 0;
for (const p of parts) for (const e of p.footer.series) samples += e.count;
console.log(`${parts.length} parts, ${(chosen.reduce((n, c) => n + c.size, 0) / 1e6).toFixed(1)} MB, ${samples} samples`);
for (let round = 0; round < Number(roundsArg); round++) {
  for (const [name, decode] of Object.entries(ways)) {
    const c0 = process.cpuUsage();
    const t0 = performance.now();
    let n = 0;
    for (const p of parts) for (const e of p.footer.series) n += decode(p, e);
    const cpu = process.cpuUsage(c0);
    if (n !== samples) throw new Error(`${name}: ${n} samples, expected ${samples}`);
    console.log(`round ${round + 1} ${name.padEnd(8)} wall ${(performance.now() - t0).toFixed(0)} ms, CPU ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms, ${(((cpu.user + cpu.system) * 1000) / samples).toFixed(0)} ns/sample`);
  }
}
