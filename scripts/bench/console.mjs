// Console type-ahead benchmark (issue 16): do the pickers stay responsive over 100 k series?
// Starts the built embedded server with S4's defaults, writes BENCH_SERIES series (one metric,
// tags host=h<i> and rack=r<i % 100>, a few samples each in the current hour), then in Debian's
// chromium (playwright-core) opens /ui and measures, in the page:
//   - the first metric suggestion on a fresh page (GET /v1/series of every series, parsing, indexing),
//   - the first tag-value suggestions after picking the metric (its chart query runs meanwhile),
//   - then each further keystroke → suggestions shown (filtering 100 k values, drawing ≤ 50),
// plus GET /v1/series alone from Node (time and bytes) for reference.
// Usage: npm run build && node scripts/bench/console.mjs   (env: BENCH_SERIES, CHROMIUM_PATH)
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import { chromium } from 'playwright-core';
import { ok, waitHttp } from './lib/http.mjs';
import { machine, start, stop } from './lib/proc.mjs';
import { percentile } from './lib/stats.mjs';

const require = createRequire(import.meta.url);
const { Packr } = require('msgpackr');
const packr = new Packr({ useRecords: false, moreTypes: true });

const SERIES = Number(process.env.BENCH_SERIES ?? 100_000);
const BATCH = 10_000;
const KEYSTROKES = ['h', 'h1', 'h12', 'h123', 'h1234', 'h123', 'h12', 'h1', 'h9', 'h99', 'h999', 'h9999'];
const root = new URL('../../', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 's4-console-bench-'));
const port = 19000 + Math.floor(Math.random() * 1000);
const url = `http://127.0.0.1:${port}`;
const env = { ...process.env, S4_DATA_DIR: dir, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', S4_EMBEDDED_FSYNC: 'never' };

const server = start(process.execPath, [join(root, 'apps/api/dist/main.js')], { env, log: join(dir, 'server.log') });
let browser;
try {
  await waitHttp(`${url}/readyz`, 60_000);
  const now = Date.now();
  const ts = [now - 120_000, now - 60_000];
  for (let i = 0; i < SERIES; i += BATCH) {
    const series = [];
    for (let s = i; s < Math.min(SERIES, i + BATCH); s++) series.push({ metric: 'bench.console', tags: { host: `h${s}`, rack: `r${s % 100}` }, ts, fields: { value: [s, s + 1] } });
    await ok(`${url}/v1/write`, { body: packr.pack({ series }), headers: { 'content-type': 'application/msgpack' } });
  }

  const lists = [];
  let bytes = 0;
  for (let i = 0; i < 5; i++) {
    const t0 = performance.now();
    const r = await ok(`${url}/v1/series?from=${now - 3_600_000}&to=${now + 60_000}`);
    bytes = r.body.length;
    if (JSON.parse(r.body.toString()).series.length !== SERIES) throw new Error('series count');
    lists.push(performance.now() - t0);
  }

  browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
  await page.goto(`${url}/ui/#explore`);
  // Keystroke → the list shows the first suggestion for it, timed in the page.
  const typed = (value, name = 'tag-value') =>
    page.evaluate(async ([v, name]) => {
      const input = document.querySelector(`input[name="${name}"]`);
      input.focus();
      const t0 = performance.now();
      input.value = v;
      input.dispatchEvent(new Event('input'));
      for (;;) {
        const first = document.querySelector('.suggest:not([hidden]) li');
        if (first && first.textContent.startsWith(v)) return performance.now() - t0;
        await new Promise((r) => requestAnimationFrame(r));
      }
    }, [value, name]);
  // On a fresh page: the first metric suggestion waits for GET /v1/series of every series.
  const firstMetric = await typed('bench', 'metric');
  await page.fill('input[name="metric"]', 'bench.console');
  await page.press('input[name="metric"]', 'Enter');
  await page.fill('input[name="tag-key"]', 'host');
  await page.press('input[name="tag-key"]', 'Enter');
  await page.focus('input[name="tag-value"]');
  const first = await typed('h');
  const keys = [];
  for (let round = 0; round < 3; round++) for (const k of KEYSTROKES) keys.push(await typed(k));
  const sorted = Float64Array.from(keys).sort();
  const heap = await page.evaluate(() => performance.memory?.usedJSHeapSize ?? null);

  console.log(`machine: ${JSON.stringify(machine())}, date: ${new Date().toISOString()} (shared with other sessions)`);
  console.log(`dataset: ${SERIES} series of one metric (tags host, rack), embedded, S4 defaults`);
  console.log(`GET /v1/series (all ${SERIES}) from Node: median ${percentile(Float64Array.from(lists).sort(), 50).toFixed(0)} ms, ${(bytes / 2 ** 20).toFixed(1)} MiB`);
  console.log(`first metric suggestion on a fresh page (GET /v1/series + parse + index): ${firstMetric.toFixed(0)} ms`);
  console.log(`first tag-value suggestions while the chart's query of all ${SERIES} series runs: ${first.toFixed(0)} ms`);
  console.log(`keystroke → suggestions (${keys.length}, incl. the 120 ms debounce): p50 ${percentile(sorted, 50).toFixed(0)} ms, p99 ${percentile(sorted, 99).toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms`);
  if (heap !== null) console.log(`page JS heap: ${(heap / 2 ** 20).toFixed(0)} MiB`);
} finally {
  await browser?.close();
  await stop(server);
  rmSync(dir, { recursive: true, force: true });
}
