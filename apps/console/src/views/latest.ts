import { getJson, type Series } from '../api.js';
import { h } from '../dom.js';
import { formatAge, recordAt, seriesLabel } from '../model.js';
import { Selector } from '../selector.js';
import { cell, errorText, status, type View } from './common.js';

/** Latest: the newest sample of every series matching the selector, refreshed on a timer. */
export class LatestView implements View {
  readonly el: HTMLElement;
  private readonly selector: Selector;
  private readonly every: HTMLSelectElement;
  private readonly body: HTMLElement;
  private readonly status = status();
  private timer: ReturnType<typeof setInterval> | null = null;

  constructor() {
    const run = () => void this.refresh();
    // /v1/latest looks back a day from now; the pickers still list the last hour's series.
    this.selector = new Selector(run, { showRange: false });
    this.every = h('select', { name: 'refresh', onchange: () => this.start() }, ...[['5000', 'every 5 s'], ['30000', 'every 30 s'], ['0', 'paused']].map(([v, t]) => h('option', { value: v }, t)));
    this.body = h('div', { class: 'table-box' });
    this.el = h('section', { class: 'view latest' }, this.selector.el, h('div', { class: 'toolbar' }, this.every, h('button', { type: 'button', name: 'refresh-now', onclick: run }, 'Refresh')), this.status.el, this.body);
  }

  start(): void {
    this.stop();
    const ms = Number(this.every.value);
    if (ms > 0) this.timer = setInterval(() => void this.refresh(), ms);
    void this.refresh();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async refresh(): Promise<void> {
    const { metric, tag } = this.selector.params();
    if (!metric) return this.status.set('Pick a metric.');
    try {
      const { series } = await getJson<{ series: Series[] }>('/v1/latest', { metric, tag });
      const now = Date.now();
      const rows = series.map((s) => recordAt(s, s.ts.length - 1)).sort((a, b) => seriesLabel(a).localeCompare(seriesLabel(b)));
      this.body.replaceChildren(
        h(
          'table',
          { class: 'data' },
          h('thead', {}, h('tr', {}, h('th', {}, 'series'), h('th', {}, 'time'), h('th', {}, 'age'), h('th', {}, 'fields'))),
          h('tbody', {}, ...rows.map((r) => h('tr', {}, h('td', {}, seriesLabel(r)), h('td', {}, r.time), h('td', {}, formatAge(now - r.ts)), h('td', { class: 'mono' }, cell(r.fields))))),
        ),
      );
      this.status.set(`${rows.length} series, updated ${new Date(now).toLocaleTimeString()}`);
    } catch (e) {
      this.status.set(errorText(e), true);
    }
  }
}
