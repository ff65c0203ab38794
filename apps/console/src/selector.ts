import { h } from './dom.js';
import { PRESETS, fromLocalInput, toLocalInput } from './model.js';
import { SeriesIndex } from './series-index.js';
import { typeahead } from './typeahead.js';

export interface Selection {
  metric: string;
  /** key:value pairs, all must match. */
  tags: [string, string][];
  from: number;
  to: number;
}

/** The time-range picker: presets (relative to now) or an absolute [from, to). */
export class RangePicker {
  readonly el: HTMLElement;
  private preset: number | null;
  private from: number;
  private to: number;
  private readonly select: HTMLSelectElement;
  private readonly fromInput: HTMLInputElement;
  private readonly toInput: HTMLInputElement;

  constructor(
    private readonly onChange: () => void,
    initial: { preset?: number; from?: number; to?: number } = {},
  ) {
    this.preset = initial.from === undefined ? (initial.preset ?? 3_600_000) : null;
    this.to = initial.to ?? Date.now();
    this.from = initial.from ?? this.to - (this.preset ?? 3_600_000);
    this.select = h(
      'select',
      { name: 'range', onchange: () => this.pickPreset() },
      ...PRESETS.map((p) => h('option', { value: p.ms, selected: p.ms === this.preset }, `last ${p.name}`)),
      h('option', { value: 'abs', selected: this.preset === null }, 'absolute'),
    );
    const abs = () => this.pickAbsolute();
    this.fromInput = h('input', { type: 'datetime-local', name: 'from', onchange: abs });
    this.toInput = h('input', { type: 'datetime-local', name: 'to', onchange: abs });
    this.el = h('span', { class: 'range' }, this.select, this.fromInput, '→', this.toInput);
    this.show();
  }

  /** The range now; a preset moves with the clock. */
  get(): { from: number; to: number } {
    if (this.preset !== null) {
      this.to = Date.now();
      this.from = this.to - this.preset;
      this.show();
    }
    return { from: this.from, to: this.to };
  }

  link(): { preset: number } | { from: number; to: number } {
    return this.preset !== null ? { preset: this.preset } : { from: this.from, to: this.to };
  }

  /** An absolute range (zooming in on the chart). */
  set(from: number, to: number): void {
    this.preset = null;
    this.from = Math.floor(from);
    this.to = Math.ceil(to);
    this.select.value = 'abs';
    this.show();
  }

  private show(): void {
    this.fromInput.value = toLocalInput(this.from);
    this.toInput.value = toLocalInput(this.to);
  }

  private pickPreset(): void {
    if (this.select.value === 'abs') {
      this.preset = null;
      return;
    }
    this.preset = Number(this.select.value);
    this.get();
    this.onChange();
  }

  private pickAbsolute(): void {
    const from = fromLocalInput(this.fromInput.value);
    const to = fromLocalInput(this.toInput.value);
    if (from === null || to === null || to <= from) return;
    this.set(from, to);
    this.onChange();
  }
}

/** Metric and tag pickers (type-ahead over the series index) plus the range picker. */
export class Selector {
  readonly el: HTMLElement;
  readonly range: RangePicker;
  readonly index: SeriesIndex;
  private metric: string;
  private tags: [string, string][] = [];
  private readonly chips: HTMLElement;

  constructor(
    private readonly onChange: () => void,
    initial: { metric?: string; tags?: [string, string][]; showRange?: boolean; range?: { preset?: number; from?: number; to?: number } } = {},
  ) {
    this.metric = initial.metric ?? '';
    this.tags = initial.tags ?? [];
    this.range = new RangePicker(onChange, initial.range);
    this.index = new SeriesIndex(
      () => this.range.get(),
      () => this.tags.map(([k, v]) => `${k}:${v}`),
    );
    const metric = typeahead({
      name: 'metric',
      placeholder: 'metric',
      value: this.metric,
      source: (t) => this.index.metrics(t),
      onPick: (m) => {
        this.metric = m;
        onChange();
      },
    });
    let key = '';
    const tagKey = typeahead({ name: 'tag-key', placeholder: 'tag key', source: (t) => this.index.tagKeys(this.metric, t), onPick: (k) => ((key = k), tagValue.input.focus()) });
    const tagValue = typeahead({
      name: 'tag-value',
      placeholder: 'value',
      source: (t) => this.index.tagValues(this.metric, key || tagKey.input.value, t),
      onPick: (v) => {
        const k = key || tagKey.input.value.trim();
        if (!k || !v) return;
        this.tags = [...this.tags.filter(([x]) => x !== k), [k, v]];
        tagKey.input.value = tagValue.input.value = key = '';
        this.drawChips();
        onChange();
      },
    });
    this.chips = h('span', { class: 'chips' });
    this.el = h('div', { class: 'selector' }, metric.el, h('span', { class: 'tag-picker' }, tagKey.el, '=', tagValue.el), this.chips, initial.showRange === false ? null : this.range.el);
    this.drawChips();
  }

  private drawChips(): void {
    this.chips.replaceChildren(
      ...this.tags.map(([k, v]) =>
        h('span', { class: 'chip' }, `${k}=${v}`, h('button', { type: 'button', title: 'remove', onclick: () => ((this.tags = this.tags.filter(([x]) => x !== k)), this.drawChips(), this.onChange()) }, '×')),
      ),
    );
  }

  get(): Selection {
    return { metric: this.metric, tags: this.tags, ...this.range.get() };
  }

  /** The selection as the part of a shareable link: metric, tags, the preset or the absolute range. */
  toLink(q: URLSearchParams): void {
    q.set('metric', this.metric);
    for (const [k, v] of this.tags) q.append('tag', `${k}:${v}`);
    const r = this.range.link();
    if ('preset' in r) q.set('last', String(r.preset));
    else {
      q.set('from', String(r.from));
      q.set('to', String(r.to));
    }
  }

  /** The constructor's `initial` from a link made by toLink. */
  static fromLink(q: URLSearchParams): { metric?: string; tags: [string, string][]; range: { preset?: number; from?: number; to?: number } } {
    const num = (k: string) => (q.has(k) && Number.isFinite(Number(q.get(k))) ? Number(q.get(k)) : undefined);
    const tags = q.getAll('tag').flatMap((t): [string, string][] => (t.includes(':') ? [[t.slice(0, t.indexOf(':')), t.slice(t.indexOf(':') + 1)]] : []));
    const from = num('from');
    const to = num('to');
    const range = from !== undefined && to !== undefined && to > from ? { from, to } : { preset: num('last') ?? 3_600_000 };
    return { metric: q.get('metric') ?? undefined, tags, range };
  }

  /** The selector as query parameters (metric, tag=k:v...). */
  params(): { metric: string; tag: string[] } {
    return { metric: this.metric, tag: this.tags.map(([k, v]) => `${k}:${v}`) };
  }
}
