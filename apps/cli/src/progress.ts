import type { Io } from './io.js';

/**
 * Import progress on stderr: one line redrawn in place on a terminal (rows, bytes, rows/s, and %
 * when the size is known); nothing but the final summary when stderr is not a terminal.
 */
export class Progress {
  rows = 0;
  bytes = 0;
  readonly #io: Io;
  readonly #total: number | undefined;
  readonly #start = performance.now();
  readonly #live: boolean;
  #lastDraw = 0;
  #note = '';

  constructor(io: Io, total: number | undefined, quiet: boolean) {
    this.#io = io;
    this.#total = total;
    this.#live = !quiet && io.stderr.isTTY === true;
  }

  /** Shown after the figures, e.g. "retrying (503)". */
  note(text: string): void {
    this.#note = text;
  }

  tick(): void {
    if (!this.#live) return;
    const now = performance.now();
    if (now - this.#lastDraw < 100) return;
    this.#lastDraw = now;
    const line = this.#line(now);
    const width = Math.max(20, (this.#io.stderr.columns ?? 100) - 1);
    this.#io.stderr.write(`\r${line.slice(0, width).padEnd(width)}`);
  }

  /** The closing line (always printed unless quiet). */
  done(verb: string, quiet: boolean): void {
    if (this.#live) this.#io.stderr.write('\r\x1b[K');
    if (!quiet) this.#io.stderr.write(`${verb} ${this.#line(performance.now()).replace(/^\S+ /, '')}\n`);
  }

  #line(now: number): string {
    const seconds = Math.max(0.001, (now - this.#start) / 1000);
    const rate = Math.round(this.rows / seconds);
    const size = this.#total === undefined ? formatBytes(this.bytes) : `${formatBytes(this.bytes)} / ${formatBytes(this.#total)} (${Math.min(100, Math.floor((this.bytes / Math.max(1, this.#total)) * 100))}%)`;
    const bar = this.#total === undefined ? '' : `${renderBar(this.bytes / Math.max(1, this.#total), 20)} `;
    return `importing ${bar}${this.rows.toLocaleString('en-US')} rows  ${size}  ${rate.toLocaleString('en-US')} rows/s  ${seconds.toFixed(1)} s${this.#note === '' ? '' : `  ${this.#note}`}`;
  }
}

function renderBar(fraction: number, width: number): string {
  const full = Math.round(Math.min(1, Math.max(0, fraction)) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}]`;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(1)} ${units[u]}`;
}
