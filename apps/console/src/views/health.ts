import { getJson, request } from '../api.js';
import { h } from '../dom.js';
import { errorCounters, formatAge, formatBytes } from '../model.js';
import { cell, errorText, status, type View } from './common.js';

/** GET /v1/admin/shards (see apps/api/src/roles/api/openapi.ts, SHARDS_RESULT_SCHEMA). */
interface ShardHealth {
  shard: number;
  hot: { bytes: number; logs: number; windows: number[]; oldestWindow: number | null };
  flush: { closedWindows: number; lagMs: number; lastAt: number | null; lastWindow: number | null; lastLagMs: number | null };
  compaction: { windows: number; parts: number; bytes: number; maxPartsPerWindow: number; windowsWithDebt: number };
  rollup: { fresh: number; stale: number; oldestStale: number | null; lastAt: number | null };
}

const REFRESH_MS = 10_000;

/** Health: per shard, the hot tier, flushes, compaction debt and rollup freshness; error counters from /metrics. */
export class HealthView implements View {
  readonly el: HTMLElement;
  private readonly shards = h('div', { class: 'table-box' });
  private readonly errors = h('div', { class: 'errors' });
  private readonly status = status();
  private timer: ReturnType<typeof setInterval> | null = null;
  /** Counter values when the page was opened: "recent" is what grew since. */
  private baseline: Map<string, number> | null = null;

  constructor() {
    this.el = h('section', { class: 'view health' }, h('h2', {}, 'Shards'), this.status.el, this.shards, h('h2', {}, 'Errors'), this.errors);
  }

  start(): void {
    this.stop();
    this.timer = setInterval(() => void this.refresh(), REFRESH_MS);
    void this.refresh();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async refresh(): Promise<void> {
    await Promise.all([this.refreshShards(), this.refreshErrors()]);
  }

  private async refreshShards(): Promise<void> {
    try {
      const { now, lookbackMs, shards } = await getJson<{ now: number; lookbackMs: number; shards: ShardHealth[] }>('/v1/admin/shards');
      const warn = (bad: boolean) => (bad ? 'warn' : null);
      // Concerns added to the shard object later (ingest lag, ...) show as columns of their own.
      const known = new Set(['shard', 'hot', 'flush', 'compaction', 'rollup']);
      const extra = [...new Set(shards.flatMap((s) => Object.keys(s)))].filter((k) => !known.has(k));
      this.shards.replaceChildren(
        h(
          'table',
          { class: 'data shards' },
          h(
            'thead',
            {},
            h('tr', {}, ...['shard', 'hot bytes', 'hot logs', 'oldest unflushed', 'flush lag', 'last part', 'its lag', 'parts / windows', 'max parts / window', 'fold debt', 'rollups fresh / stale', 'oldest stale', 'last rollup', ...extra].map((t) => h('th', {}, t))),
          ),
          h(
            'tbody',
            {},
            ...shards.map((s) =>
              h(
                'tr',
                { 'data-shard': s.shard },
                h('td', {}, s.shard),
                h('td', {}, formatBytes(s.hot.bytes)),
                h('td', {}, s.hot.logs),
                when(s.hot.oldestWindow, now),
                h('td', { class: warn(s.flush.closedWindows > 0) }, s.flush.closedWindows ? `${formatAge(s.flush.lagMs)} (${s.flush.closedWindows} closed)` : '0'),
                when(s.flush.lastAt, now),
                h('td', {}, s.flush.lastLagMs === null ? '—' : formatAge(s.flush.lastLagMs)),
                h('td', {}, `${s.compaction.parts} / ${s.compaction.windows}`),
                h('td', { class: warn(s.compaction.maxPartsPerWindow > 4) }, s.compaction.maxPartsPerWindow),
                h('td', {}, s.compaction.windowsWithDebt),
                h('td', { class: warn(s.rollup.stale > 0) }, `${s.rollup.fresh} / ${s.rollup.stale}`),
                when(s.rollup.oldestStale, now),
                when(s.rollup.lastAt, now),
                ...extra.map((k) => h('td', { class: 'mono' }, cell((s as unknown as Record<string, unknown>)[k]))),
              ),
            ),
          ),
        ),
      );
      this.status.set(`${shards.length} shards; catalogs of the last ${formatAge(lookbackMs)}; updated ${new Date().toLocaleTimeString()}`);
    } catch (e) {
      this.status.set(errorText(e), true);
    }
  }

  private async refreshErrors(): Promise<void> {
    try {
      const counters = errorCounters(await (await request('/metrics')).text());
      this.baseline ??= counters;
      const rows = [...counters].map(([name, v]) => {
        const recent = v - (this.baseline!.get(name) ?? 0);
        return h('tr', { class: recent > 0 ? 'warn' : null }, h('td', { class: 'mono' }, name), h('td', {}, v), h('td', {}, recent));
      });
      this.errors.replaceChildren(
        h('table', { class: 'data' }, h('thead', {}, h('tr', {}, h('th', {}, 'counter'), h('th', {}, 'total'), h('th', {}, 'since this page opened'))), h('tbody', {}, ...rows)),
      );
    } catch (e) {
      this.errors.replaceChildren(h('p', { class: 'error' }, `/metrics: ${errorText(e)}`));
    }
  }
}

/** A time as its age; the exact time on hover. */
function when(ts: number | null, now: number): HTMLElement {
  return ts === null ? h('td', {}, '—') : h('td', { title: new Date(ts).toISOString() }, `${formatAge(now - ts)} ago`);
}
