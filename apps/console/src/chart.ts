import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';
import { h } from './dom.js';
import { align, type Line } from './model.js';

const COLORS = ['#2f6fdf', '#e0662f', '#2a9d5b', '#b53fb5', '#c9a227', '#1aa3a3', '#d43d5a', '#6b6b6b'];
const HEIGHT = 320;
/** Lines drawn at most: a metric of 100 k series must not freeze the tab (narrow it with tags or groupBy). */
export const MAX_LINES = 40;
/** Axis and padding pixels beside the plot area: maxPoints is the plot's own width. */
const GUTTER = 70;

/**
 * A uPlot time chart. Dragging across it selects a range: `onZoom` gets it (the view refetches
 * at the new resolution instead of stretching the points it has). A click reports the time and
 * index under the cursor (the record inspector).
 */
export class Chart {
  readonly el: HTMLElement;
  private plot: uPlot | null = null;
  private xs: number[] = [];

  constructor(
    private readonly onZoom: (from: number, to: number) => void,
    private readonly onClick?: (ts: number) => void,
  ) {
    this.el = h('div', { class: 'chart', 'data-points': 0 });
    new ResizeObserver(() => this.plot?.setSize(this.size())).observe(this.el);
  }

  /** Points the server should send per series for this chart: one per pixel column. */
  pixelWidth(): number {
    return Math.max(4, Math.round((this.el.clientWidth || 800) - GUTTER));
  }

  private size(): { width: number; height: number } {
    return { width: Math.max(200, this.el.clientWidth || 800), height: HEIGHT };
  }

  /** Draws the lines (at most MAX_LINES: pass `linesOf(..., MAX_LINES)`). */
  draw(all: readonly Line[], range: { from: number; to: number }): void {
    const lines = all.slice(0, MAX_LINES);
    this.plot?.destroy();
    this.plot = null;
    this.el.replaceChildren();
    const data = align(lines);
    this.xs = data[0];
    this.el.dataset['points'] = String(data[0].length);
    if (lines.length === 0) {
      this.el.append(h('p', { class: 'empty' }, 'No numeric data in this range.'));
      return;
    }
    const opts: uPlot.Options = {
      ...this.size(),
      ms: 1,
      scales: { x: { time: true, min: range.from, max: range.to } },
      cursor: { drag: { x: true, y: false, setScale: false } },
      legend: { live: true },
      series: [
        { label: 'time', value: (_u, v) => (v === null ? '--' : new Date(v).toISOString()) },
        ...lines.map((l, i) => ({ label: l.label, stroke: COLORS[i % COLORS.length]!, width: 1.5, spanGaps: false, points: { show: false }, value: (_u: uPlot, v: number | null) => (v === null ? '--' : String(v)) })),
      ],
      hooks: {
        setSelect: [
          (u) => {
            if (u.select.width < 3) return;
            const from = u.posToVal(u.select.left, 'x');
            const to = u.posToVal(u.select.left + u.select.width, 'x');
            u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
            this.onZoom(from, to);
          },
        ],
      },
    };
    this.plot = new uPlot(opts, data, this.el);
    if (this.onClick) {
      const click = this.onClick;
      this.plot.over.addEventListener('click', () => {
        const i = this.plot?.cursor.idx;
        if (i !== null && i !== undefined && this.xs[i] !== undefined) click(this.xs[i]);
      });
    }
  }
}
