import { getJson, type FieldValue, type Series } from '../api.js';
import { Chart, MAX_LINES } from '../chart.js';
import { h } from '../dom.js';
import { fieldPaths, linesOf, recordAt } from '../model.js';
import { Selector } from '../selector.js';
import { errorText, status, type View } from './common.js';

/** Paths ticked at first: a few numeric leaves, so a chart shows without a click. */
const FIRST_PATHS = 3;

/**
 * Records: multi-field and nested samples. Dotted field paths from the latest record, fetched
 * with a `fields=` projection (only those columns are read); a click on the chart shows the whole
 * record at that time.
 */
export class RecordsView implements View {
  readonly el: HTMLElement;
  private readonly selector: Selector;
  private readonly chart: Chart;
  private readonly paths: HTMLElement;
  private readonly inspector: HTMLElement;
  private readonly status = status();
  private metric = '';
  private picked = new Set<string>();
  private ctl: AbortController | null = null;

  constructor() {
    const run = () => void this.run();
    this.selector = new Selector(run);
    this.chart = new Chart(
      (from, to) => {
        this.selector.range.set(from, to);
        run();
      },
      (ts) => void this.inspect(ts),
    );
    this.paths = h('fieldset', { class: 'paths' }, h('legend', {}, 'field paths'));
    this.inspector = h('div', { class: 'inspector', hidden: true });
    this.el = h('section', { class: 'view records' }, this.selector.el, this.paths, this.status.el, this.chart.el, this.inspector);
  }

  start(): void {}
  stop(): void {
    this.ctl?.abort();
  }

  private async run(): Promise<void> {
    const sel = this.selector.get();
    if (!sel.metric) return this.status.set('Pick a metric.');
    this.ctl?.abort();
    const ctl = (this.ctl = new AbortController());
    try {
      if (sel.metric !== this.metric) await this.loadPaths(sel.metric, ctl.signal);
      const fields = [...this.picked];
      if (fields.length === 0) return this.status.set('Tick at least one field path.');
      this.status.set('Loading…');
      const { series } = await getJson<{ series: Series[] }>('/v1/query', { ...this.selector.params(), from: sel.from, to: sel.to, fields: fields.join(','), maxPoints: this.chart.pixelWidth() }, ctl.signal);
      if (ctl.signal.aborted) return;
      const lines = linesOf(series, fields, MAX_LINES);
      this.chart.draw(lines, sel);
      const capped = lines.length === MAX_LINES ? `; the first ${MAX_LINES} lines drawn` : '';
      this.status.set(`${series.length} series, ${series.reduce((a, s) => a + s.ts.length, 0)} records; fields=${fields.join(',')}${capped}. Click the chart to inspect a record.`);
    } catch (e) {
      if (!ctl.signal.aborted) this.status.set(errorText(e), true);
    }
  }

  /** The paths of the latest record of each matching series. */
  private async loadPaths(metric: string, signal: AbortSignal): Promise<void> {
    const { series } = await getJson<{ series: Series[] }>('/v1/latest', { ...this.selector.params(), from: 0 }, signal);
    const paths = new Set<string>();
    const numeric = new Set<string>();
    for (const s of series) {
      const rec = recordAt(s, s.ts.length - 1).fields;
      for (const p of fieldPaths(rec)) {
        paths.add(p);
        if (typeof leaf(rec, p) === 'number') numeric.add(p);
      }
    }
    this.metric = metric;
    this.picked = new Set([...numeric].sort().slice(0, FIRST_PATHS));
    this.paths.replaceChildren(
      h('legend', {}, 'field paths'),
      ...[...paths].sort().map((p) =>
        h(
          'label',
          { class: 'path' },
          h('input', {
            type: 'checkbox',
            name: 'path',
            value: p,
            checked: this.picked.has(p),
            onchange: (e: Event) => {
              if ((e.target as HTMLInputElement).checked) this.picked.add(p);
              else this.picked.delete(p);
              void this.run();
            },
          }),
          p,
        ),
      ),
    );
  }

  /** The whole record(s) at `ts`: every field, unprojected. */
  private async inspect(ts: number): Promise<void> {
    this.inspector.hidden = false;
    try {
      const { series } = await getJson<{ series: Series[] }>('/v1/query', { ...this.selector.params(), from: ts, to: ts + 1 });
      const records = series.flatMap((s) => s.ts.map((_, i) => recordAt(s, i)));
      this.inspector.replaceChildren(
        h('h3', {}, `Record at ${new Date(ts).toISOString()}`, h('button', { type: 'button', name: 'close-inspector', onclick: () => (this.inspector.hidden = true) }, '×')),
        h('pre', { class: 'json' }, JSON.stringify(records.length === 1 ? records[0] : records, null, 2)),
      );
    } catch (e) {
      this.inspector.replaceChildren(h('p', { class: 'error' }, errorText(e)));
    }
  }
}

function leaf(rec: Record<string, FieldValue>, path: string): FieldValue | undefined {
  let v: FieldValue | undefined = rec;
  for (const k of path.split('.')) {
    if (v === null || v === undefined || typeof v !== 'object' || Array.isArray(v) || !Object.hasOwn(v, k)) return undefined;
    v = v[k];
  }
  return v;
}
