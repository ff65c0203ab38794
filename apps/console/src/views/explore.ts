import { query, request, type Params, type Series } from '../api.js';
import { Chart, MAX_LINES } from '../chart.js';
import { download, h } from '../dom.js';
import { autoStep, linesOf } from '../model.js';
import { Selector } from '../selector.js';
import { errorText, seriesTable, status, type View } from './common.js';

const STEPS = ['auto', '1m', '1h', '1d'] as const;

/** Explore: pick series, a range and a resolution; chart, table, export. */
export class ExploreView implements View {
  readonly el: HTMLElement;
  private readonly selector: Selector;
  private readonly chart: Chart;
  private readonly agg: HTMLSelectElement;
  private readonly step: HTMLSelectElement;
  private readonly groupBy: HTMLInputElement;
  private readonly tableBox: HTMLElement;
  private readonly status = status();
  private inFlight: AbortController | null = null;
  private shown: { params: Params; series: Series[] } | null = null;
  private tab: 'chart' | 'table' = 'chart';

  /** `link`: the query part of a link to this view (#explore?metric=...), restored as it was. */
  constructor(link = new URLSearchParams()) {
    const run = () => void this.run();
    this.selector = new Selector(run, Selector.fromLink(link));
    this.chart = new Chart((from, to) => {
      this.selector.range.set(from, to);
      run();
    });
    this.agg = h('select', { name: 'agg', onchange: run }, ...['raw', 'avg', 'min', 'max'].map((a) => h('option', { value: a, selected: a === link.get('agg') }, a)));
    this.step = h('select', { name: 'step', onchange: run }, ...STEPS.map((s) => h('option', { value: s, selected: s === link.get('step') }, s)));
    this.groupBy = h('input', { name: 'groupBy', placeholder: 'group by tag keys (a,b)', onchange: run, value: link.get('groupBy') ?? '' });
    this.tableBox = h('div', { class: 'table-box', hidden: true });
    const tabs = h(
      'span',
      { class: 'tabs' },
      h('button', { type: 'button', name: 'show-chart', onclick: () => this.show('chart') }, 'Chart'),
      h('button', { type: 'button', name: 'show-table', onclick: () => this.show('table') }, 'Table'),
    );
    this.el = h(
      'section',
      { class: 'view explore' },
      this.selector.el,
      h(
        'div',
        { class: 'toolbar' },
        h('label', {}, 'resolution ', this.agg, ' per ', this.step),
        this.groupBy,
        h('button', { type: 'button', class: 'primary', name: 'run', onclick: run }, 'Run'),
        h('button', { type: 'button', name: 'zoom-out', onclick: () => this.zoomOut() }, 'Zoom out'),
        tabs,
        h('button', { type: 'button', name: 'export-csv', onclick: () => void this.export('csv') }, 'CSV'),
        h('button', { type: 'button', name: 'export-ndjson', onclick: () => void this.export('ndjson') }, 'NDJSON'),
      ),
      this.status.el,
      this.chart.el,
      this.tableBox,
    );
    this.syncControls();
  }

  private started = false;

  start(): void {
    // A link that names a metric shows its chart at once.
    if (!this.started && this.selector.get().metric) void this.run();
    this.started = true;
  }

  stop(): void {
    this.inFlight?.abort();
  }

  /** Keep the address a link to what is shown (replacing it: no history entry per query). */
  private remember(): void {
    const q = new URLSearchParams();
    this.selector.toLink(q);
    if (this.agg.value !== 'raw') {
      q.set('agg', this.agg.value);
      q.set('step', this.step.value);
    }
    if (this.groupBy.value.trim()) q.set('groupBy', this.groupBy.value.trim());
    history.replaceState(null, '', `#explore?${q}`);
  }

  private syncControls(): void {
    const raw = this.agg.value === 'raw';
    this.step.disabled = raw;
    this.groupBy.disabled = raw;
  }

  private params(): Params | null {
    const sel = this.selector.get();
    if (!sel.metric) return null;
    const base: Params = { ...this.selector.params(), from: sel.from, to: sel.to };
    if (this.agg.value === 'raw') return { ...base, maxPoints: this.chart.pixelWidth() };
    const groupBy = this.groupBy.value.trim();
    // auto: about one bucket per pixel column, so zooming in asks for finer buckets.
    const step = this.step.value === 'auto' ? autoStep(sel.to - sel.from, this.chart.pixelWidth()) : this.step.value;
    return { ...base, step, agg: this.agg.value, ...(groupBy ? { groupBy } : {}) };
  }

  async run(): Promise<void> {
    this.syncControls();
    const params = this.params();
    if (!params) return this.status.set('Pick a metric.');
    this.inFlight?.abort();
    const ctl = (this.inFlight = new AbortController());
    this.remember();
    this.status.set('Loading…');
    try {
      const res = await request(`/v1/query?${query(params)}`, {}, ctl.signal);
      const { series } = (await res.json()) as { series: Series[] };
      if (ctl.signal.aborted) return;
      this.shown = { params, series };
      const points = series.reduce((a, s) => a + s.ts.length, 0);
      const range = { from: Number(params['from']), to: Number(params['to']) };
      const per = params['maxPoints'] ? `maxPoints ${params['maxPoints']} (≥ ${Math.ceil((range.to - range.from) / Number(params['maxPoints']))} ms per point)` : `step ${params['step']} ${params['agg']}`;
      const lines = linesOf(series, undefined, MAX_LINES);
      this.chart.draw(lines, range);
      const capped = lines.length === MAX_LINES && series.length > MAX_LINES ? `; the first ${MAX_LINES} lines drawn (narrow with tags or groupBy; the table and exports have all)` : '';
      this.status.set(`${series.length} series, ${points} points; ${per}${capped}`);
      if (this.tab === 'table') this.tableBox.replaceChildren(seriesTable(series));
    } catch (e) {
      if (!ctl.signal.aborted) this.status.set(errorText(e), true);
    }
  }

  private show(tab: 'chart' | 'table'): void {
    this.tab = tab;
    this.chart.el.hidden = tab !== 'chart';
    this.tableBox.hidden = tab !== 'table';
    if (tab === 'table') this.tableBox.replaceChildren(this.shown ? seriesTable(this.shown.series) : h('p', {}, 'Run a query first.'));
  }

  private zoomOut(): void {
    const { from, to } = this.selector.range.get();
    const span = to - from;
    this.selector.range.set(from - span / 2, to + span / 2);
    void this.run();
  }

  /** The shown range and resolution in full (no maxPoints: every raw sample), as a file. */
  private async export(format: 'csv' | 'ndjson'): Promise<void> {
    const params = this.shown?.params ?? this.params();
    if (!params) return this.status.set('Pick a metric.');
    const { maxPoints: _drop, ...rest } = params;
    try {
      const res = await request(`/v1/query?${query({ ...rest, format })}`);
      download(`${String(params['metric'])}.${format}`, await res.blob());
    } catch (e) {
      this.status.set(errorText(e), true);
    }
  }
}
