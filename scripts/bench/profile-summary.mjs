// Top self-time functions of a V8 .cpuprofile (node --cpu-prof).
// Usage: node scripts/bench/profile-summary.mjs FILE.cpuprofile [N]
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export function summarizeProfile(file, top = 25) {
  const p = JSON.parse(readFileSync(file, 'utf8'));
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const dt = p.timeDeltas;
  let total = 0;
  for (let i = 0; i < p.samples.length; i++) {
    const n = byId.get(p.samples[i]);
    const d = dt[i] ?? 0;
    total += d;
    const cf = n.callFrame;
    const url = cf.url.replace(/^file:\/\/.*?\/(node_modules|apps|libs)\//, '$1/');
    const key = `${cf.functionName || '(anonymous)'} ${url ? `${url}:${cf.lineNumber + 1}` : ''}`.trim();
    self.set(key, (self.get(key) ?? 0) + d);
  }
  return [...self.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, us]) => ({ fn, ms: Math.round(us / 1000), pct: Math.round((1000 * us) / total) / 10 }));
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const rows = summarizeProfile(process.argv[2], Number(process.argv[3] ?? 30));
  for (const r of rows) console.log(`${String(r.pct).padStart(5)} %  ${String(r.ms).padStart(7)} ms  ${r.fn}`);
}
