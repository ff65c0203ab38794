import { existsSync, mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromium, type Browser, type Page, type Response as PwResponse } from 'playwright-core';
import { S4Process } from '../support/s4-process.js';
import { tempDir, uniqueNamespace } from '../support/servers.js';

/**
 * The web console (/ui) in a real browser (Debian's chromium, driven by playwright-core) against
 * a real embedded server holding known data. With CONSOLE_SCREENSHOTS=<dir> each view is saved
 * there as a PNG (docs/console/ holds the ones the README shows).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const SHOTS = process.env.CONSOLE_SCREENSHOTS;
const KEY = 'console-test-key-0123456789';
const H = 3_600_000;
const SHARDS = 4;
const NOW = Date.now();
/** Four closed hours (flushed before the browser opens) and the current one (still hot). */
const START = Math.floor(NOW / H) * H - 4 * H;
const STEP = 10_000;
const HOSTS = ['a', 'b'];

const cpu = (h: number, i: number) => Math.round((50 + 30 * Math.sin(i / 40) + 10 * h + i / 1000) * 1000) / 1000;
const rigRecord = (i: number) => ({ motor: { rpm: 1000 + (i % 97) * 3, temp: 40 + (i % 13) / 2 }, status: i % 50 === 0 ? 'service' : 'ok', errors: [i % 7] });

/** Page functions (page.evaluate) run in the browser; the test program has no DOM types, so this is all they use of it. */
interface Canvas {
  width: number;
  height: number;
  getContext(kind: '2d'): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } } | null;
}
declare const document: { querySelector(selector: string): Canvas | null };
type Valued = { value: string; dataset: Record<string, string | undefined> };

describe('web console in a real browser', () => {
  let s4: S4Process;
  let browser: Browser;
  let page: Page;
  const auth = { authorization: `Bearer ${KEY}` };
  const pageErrors: string[] = [];
  const consoleErrors: string[] = [];
  const cpuTimes: number[] = [];
  for (let t = START; t < NOW - 60_000; t += STEP) cpuTimes.push(t);
  const rigTimes = cpuTimes.filter((t) => t % 60_000 === 0);

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (scripts/test.sh does it)`);
    s4 = await S4Process.start({ S4_DATA_DIR: tempDir('console'), S4_NAMESPACE: uniqueNamespace(), S4_SHARDS: String(SHARDS), S4_API_KEYS: KEY, S4_FLUSH_INTERVAL_MS: '3600000', S4_COMPACT_INTERVAL_MS: '3600000' });
    const series = [
      ...HOSTS.map((host, h) => ({ metric: 'cpu', tags: { host }, ts: cpuTimes, fields: { value: cpuTimes.map((_, i) => cpu(h, i)) } })),
      { metric: 'rig', tags: { site: 'north' }, ts: rigTimes, fields: { motor: rigTimes.map((_, i) => rigRecord(i).motor), status: rigTimes.map((_, i) => rigRecord(i).status), errors: rigTimes.map((_, i) => rigRecord(i).errors) } },
    ];
    const w = await fetch(`${s4.url}/v1/write`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify({ series }) });
    expect(w.status, await w.text()).toBe(204);
    // The passes in their order, by hand: run between 02:00 and 04:00 UTC, the data's first hours are
    // in a day closed over two hours ago, which a periodic compaction folded into a day object after
    // the rollup pass, leaving a stale rollup for the health view to show.
    for (const pass of ['flush', 'compact', 'rollup']) expect((await fetch(`${s4.url}/v1/admin/${pass}`, { method: 'POST', headers: auth })).status).toBe(200);
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu'] });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on('pageerror', (e) => pageErrors.push(String(e)));
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    if (SHOTS) mkdirSync(SHOTS, { recursive: true });
  });
  afterAll(async () => {
    await browser?.close();
    await s4?.stop();
  });

  const shot = async (name: string) => {
    if (SHOTS) await page.screenshot({ path: `${SHOTS}/${name}.png` });
  };
  const isQuery = (r: PwResponse) => new URL(r.url()).pathname === '/v1/query' && r.request().method() === 'GET';
  const params = (r: PwResponse) => new URL(r.url()).searchParams;

  /** Type into a picker and choose the suggestion that equals `value`. */
  async function pick(name: string, typed: string, value: string): Promise<void> {
    const input = page.locator(`.view:visible input[name="${name}"]`);
    await input.click();
    await input.fill(typed);
    await page.locator('.view:visible .suggest li', { hasText: value }).first().click();
  }

  it('serves the console with its content types, cache headers and CSP; the API keeps its own CSP', async () => {
    const index = await fetch(`${s4.url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).not.toContain('unsafe-inline');
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(await index.text())![1]!;
    const js = await fetch(`${s4.url}${script}`, { headers: { 'accept-encoding': 'gzip' } });
    expect(js.headers.get('content-type')).toBe('text/javascript; charset=utf-8');
    expect(js.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect((await fetch(`${s4.url}${script}`, { headers: { 'if-none-match': js.headers.get('etag')! } })).status).toBe(304);
    expect((await fetch(`${s4.url}/ui/assets/nope.js`)).status).toBe(404);
    expect((await fetch(`${s4.url}/ui`, { redirect: 'manual' })).headers.get('location')).toBe('/ui/');
    const api = await fetch(`${s4.url}/v1/series`, { headers: auth });
    expect(api.headers.get('content-security-policy')).toBe("default-src 'none'; frame-ancestors 'none'");
  });

  it('asks for the API key on the first 401 and keeps it in session storage only', async () => {
    await page.goto(`${s4.url}/ui/#explore`);
    await page.locator('input[name="metric"]').click();
    const dialog = page.locator('#key-dialog');
    await dialog.waitFor();
    await dialog.locator('input[name="key"]').fill(KEY);
    await dialog.locator('button.primary').click();
    await page.locator('.view:visible .suggest li', { hasText: 'cpu' }).first().waitFor();
    expect(await page.evaluate(() => [sessionStorage.getItem('s4.apiKey'), localStorage.length])).toEqual([KEY, 0]);
  });

  it('explore: picks a series, draws it, the legend shows the answer, zooming refetches finer', async () => {
    await page.selectOption('.view:visible select[name="range"]', String(6 * H));
    const answered = page.waitForResponse(isQuery);
    await pick('metric', 'cp', 'cpu');
    const first = await answered;
    const body = (await first.json()) as { series: { tags: Record<string, string>; ts: number[]; fields: { value: number[] } }[] };
    expect(body.series.map((s) => s.tags.host).sort()).toEqual(HOSTS);
    expect(Number(params(first).get('maxPoints'))).toBeGreaterThan(500);

    // The canvas is drawn: many pixels in the first line's colour (#2f6fdf).
    const blue = await page.evaluate(() => {
      const c = document.querySelector('.view .chart canvas')!;
      const d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 0; i < d.length; i += 4) if (d[i + 3]! > 200 && d[i + 2]! > 180 && d[i]! < 120 && d[i + 1]! < 160) n++;
      return n;
    });
    expect(blue).toBeGreaterThan(300);

    // The legend at the cursor shows exactly the answer's values at that time.
    const over = page.locator('.view:visible .u-over');
    const box = (await over.boundingBox())!;
    await page.mouse.move(box.x + box.width * 0.5, box.y + box.height / 2);
    const legend = await page.locator('.view:visible .u-legend tr').evaluateAll((rows) => rows.map((r) => [r.querySelector('th')?.textContent?.trim() ?? '', r.querySelector('td')?.textContent?.trim() ?? '']));
    const time = Date.parse(legend[0]![1]);
    expect(Number.isFinite(time)).toBe(true);
    let matched = 0;
    for (const s of body.series) {
      const row = legend.find(([label]) => label === `cpu{host=${s.tags.host}} value`);
      expect(row, JSON.stringify(legend)).toBeDefined();
      const i = s.ts.indexOf(time);
      expect(row![1]).toBe(i < 0 ? '--' : String(s.fields.value[i]));
      if (i >= 0) matched++;
    }
    expect(matched).toBeGreaterThan(0);
    await shot('explore');

    // Drag across a fifth of the chart: a refetch of that range, each point covering less time.
    const zoomed = page.waitForResponse(isQuery);
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const second = await zoomed;
    const perPoint = (p: URLSearchParams) => (Number(p.get('to')) - Number(p.get('from'))) / Number(p.get('maxPoints'));
    expect(perPoint(params(second))).toBeLessThan(perPoint(params(first)) / 3);
    expect(Number(params(second).get('from'))).toBeGreaterThan(Number(params(first).get('from')));

    // Step and aggregate: 1h max per host.
    const agg = page.waitForResponse(isQuery);
    await page.selectOption('.view:visible select[name="range"]', String(6 * H));
    await agg;
    const maxed = page.waitForResponse((r) => isQuery(r) && params(r).get('agg') === 'max');
    await page.selectOption('.view:visible select[name="agg"]', 'max');
    const step = await maxed;
    const stepMs = (p: URLSearchParams) => ({ s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 })[p.get('step')!.slice(-1)]! * parseInt(p.get('step')!);
    expect(stepMs(params(step))).toBeGreaterThanOrEqual(perPoint(params(first)) / 2);
    expect(((await step.json()) as { series: { fields: Record<string, unknown> }[] }).series[0]!.fields).toHaveProperty(['max(value)']);
    // The automatic step follows the zoom too: finer buckets for a fifth of the range.
    const finer = page.waitForResponse(isQuery);
    await page.mouse.move(box.x + box.width * 0.4, box.y + box.height / 2);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width * 0.6, box.y + box.height / 2, { steps: 5 });
    await page.mouse.up();
    const zoomedAgg = params(await finer);
    expect(stepMs(zoomedAgg)).toBeLessThan(stepMs(params(step)));

    // Table view and export of the shown range.
    await page.click('.view:visible button[name="show-table"]');
    expect(await page.locator('.view:visible table.data tbody tr').count()).toBeGreaterThan(10);
    const download = page.waitForEvent('download');
    await page.click('.view:visible button[name="export-csv"]');
    const file = await download;
    expect(file.suggestedFilename()).toBe('cpu.csv');
    await page.click('.view:visible button[name="show-chart"]');

    // The address is a link to what is shown: a reload asks for the same query.
    expect(page.url()).toContain('#explore?metric=cpu');
    const again = page.waitForResponse(isQuery);
    await page.reload();
    const reloaded = params(await again);
    for (const k of ['metric', 'from', 'to', 'step', 'agg']) expect(reloaded.get(k), k).toBe(zoomedAgg.get(k));
  });

  it('records: field paths from the latest record, projected query, inspector shows the record at a clicked time', async () => {
    await page.goto(`${s4.url}/ui/#records`);
    await page.selectOption('.view:visible select[name="range"]', String(6 * H));
    const answered = page.waitForResponse((r) => isQuery(r) && params(r).has('fields'));
    await pick('metric', 'ri', 'rig');
    const res = await answered;
    expect(params(res).get('fields')!.split(',').sort()).toEqual(['motor.rpm', 'motor.temp']);
    const paths = await page.locator('.view:visible input[name="path"]').evaluateAll((els) => els.map((e) => (e as unknown as Valued).value));
    expect(paths).toEqual(['errors', 'motor.rpm', 'motor.temp', 'status']);

    const box = (await page.locator('.view:visible .u-over').boundingBox())!;
    await page.mouse.click(box.x + box.width * 0.3, box.y + box.height / 2);
    const pre = page.locator('.view:visible .inspector pre');
    await pre.waitFor();
    const record = JSON.parse(await pre.textContent() ?? '') as { ts: number; tags: Record<string, string>; fields: unknown };
    const i = rigTimes.indexOf(record.ts);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(record.tags).toEqual({ site: 'north' });
    expect(record.fields).toEqual(rigRecord(i));
    await shot('records');
  });

  it('latest: one row per series with its newest sample', async () => {
    await page.goto(`${s4.url}/ui/#latest`);
    await pick('metric', 'cp', 'cpu');
    const rows = page.locator('.view:visible table.data tbody tr');
    await rows.nth(1).waitFor();
    const cells = await rows.evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    const last = cpuTimes.length - 1;
    expect(cells.map((c) => [c[0], c[1], c[3]])).toEqual(HOSTS.map((host, h) => [`cpu{host=${host}}`, new Date(cpuTimes[last]!).toISOString(), JSON.stringify({ value: cpu(h, last) })]));
    await shot('latest');

    // A tag picked by type-ahead (keys of the metric, then that key's values) narrows it to one series.
    const narrowed = page.waitForResponse((r) => new URL(r.url()).pathname === '/v1/latest' && params(r).getAll('tag').includes('host:b'));
    await pick('tag-key', 'ho', 'host');
    await pick('tag-value', '', 'b');
    await narrowed;
    await page.locator('.view:visible .chip', { hasText: 'host=b' }).waitFor();
    await expect.poll(() => rows.evaluateAll((trs) => trs.map((tr) => tr.querySelector('td')?.textContent))).toEqual(['cpu{host=b}']);
  });

  it('health: every shard, with the flushed parts and rollups it holds', async () => {
    await page.goto(`${s4.url}/ui/#health`);
    const rows = page.locator('.view:visible tr[data-shard]');
    await rows.nth(SHARDS - 1).waitFor();
    expect(await rows.evaluateAll((trs) => trs.map((tr) => (tr as unknown as Valued).dataset['shard']))).toEqual(['0', '1', '2', '3']);
    const shards = ((await (await fetch(`${s4.url}/v1/admin/shards`, { headers: auth })).json()) as { shards: { compaction: { parts: number }; rollup: { stale: number; fresh: number }; hot: { bytes: number } }[] }).shards;
    expect(shards.reduce((a, s) => a + s.compaction.parts, 0)).toBeGreaterThan(0);
    expect(shards.reduce((a, s) => a + s.rollup.fresh, 0)).toBeGreaterThan(0);
    expect(shards.every((s) => s.rollup.stale === 0)).toBe(true);
    expect(shards.reduce((a, s) => a + s.hot.bytes, 0)).toBeGreaterThan(0);
    await page.locator('.view:visible .errors table').waitFor();
    await shot('health');
  });

  it('ran without a script error or a content-security-policy violation', () => {
    expect(pageErrors).toEqual([]);
    // Expected: the first 401 (before the key was given) and a 404 from /v1/labels on a server without it.
    expect(consoleErrors.filter((e) => !/^Failed to load resource: the server responded with a status of (401|404)\b/.test(e))).toEqual([]);
  });
});
