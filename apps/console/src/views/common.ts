import { h } from '../dom.js';
import type { Series } from '../api.js';
import { recordAt, seriesLabel } from '../model.js';

/** A view of the console: built once, started when shown, stopped when left. */
export interface View {
  readonly el: HTMLElement;
  start(): void;
  stop(): void;
}

export function status(): { el: HTMLElement; set(text: string, error?: boolean): void } {
  const el = h('p', { class: 'status', role: 'status' });
  return {
    el,
    set(text, error = false) {
      el.textContent = text;
      el.classList.toggle('error', error);
    },
  };
}

export function errorText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

const TABLE_ROWS = 1000;

/** The answer as rows (time, series, one column per field), the first TABLE_ROWS of them. */
export function seriesTable(series: readonly Series[]): HTMLElement {
  const names = [...new Set(series.flatMap((s) => Object.keys(s.fields)))].sort();
  const rows: HTMLElement[] = [];
  let total = 0;
  for (const s of series) {
    total += s.ts.length;
    for (let i = 0; i < s.ts.length && rows.length < TABLE_ROWS; i++) {
      const r = recordAt(s, i);
      rows.push(h('tr', {}, h('td', {}, r.time), h('td', {}, seriesLabel(s)), ...names.map((n) => h('td', {}, cell(r.fields[n])))));
    }
  }
  return h(
    'div',
    { class: 'table-wrap' },
    total > rows.length ? h('p', { class: 'hint' }, `First ${rows.length} of ${total} rows; export for all of them.`) : null,
    h('table', { class: 'data' }, h('thead', {}, h('tr', {}, h('th', {}, 'time'), h('th', {}, 'series'), ...names.map((n) => h('th', {}, n)))), h('tbody', {}, ...rows)),
  );
}

export function cell(v: unknown): string {
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}
