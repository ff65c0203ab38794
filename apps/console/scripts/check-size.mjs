// The console's bundle budget (issue 16): every file of dist/, gzipped, at most 300 KB in all.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';

const BUDGET = 300 * 1024;
const dist = new URL('../dist/', import.meta.url).pathname;
const files = [];
const walk = (d) => {
  for (const n of readdirSync(d)) {
    const p = join(d, n);
    if (statSync(p).isDirectory()) walk(p);
    else files.push(p);
  }
};
walk(dist);
let total = 0;
const lines = files.map((f) => {
  const gz = gzipSync(readFileSync(f), { level: 9 }).length;
  total += gz;
  return `  ${relative(dist, f)}: ${(gz / 1024).toFixed(1)} KB gzip`;
});
if (total > BUDGET) {
  console.error(`console bundle is ${(total / 1024).toFixed(1)} KB gzip, over its ${BUDGET / 1024} KB budget:\n${lines.join('\n')}`);
  process.exit(1);
}
if (process.env.S4_CONSOLE_SIZE_REPORT) console.log(`console bundle ${(total / 1024).toFixed(1)} KB gzip (budget ${BUDGET / 1024} KB)\n${lines.join('\n')}`);
