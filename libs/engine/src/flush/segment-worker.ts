import type { Clock } from '@s4/core';
import type { Flusher, FlushStats } from './flusher.js';

export interface SegmentWorkerOptions {
  readonly intervalMs: number;
  /** A window is flushed this long after it ends, so that slightly late samples still join it. */
  readonly graceMs: number;
  readonly clock: Clock;
  readonly onFlush?: (stats: FlushStats, ms: number) => void;
  readonly onError?: (error: unknown) => void;
}

/** Runs the flusher on a timer; one pass at a time, stopped cleanly. */
export class SegmentWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly flusher: Flusher,
    private readonly options: SegmentWorkerOptions,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = this.pass().finally(() => {
        this.running = null;
        this.schedule();
      });
    }, this.options.intervalMs);
    this.timer.unref();
  }

  /** One pass: flush every window that closed more than the grace period ago. */
  async pass(): Promise<void> {
    const started = this.options.clock.now();
    try {
      const stats = await this.flusher.flushAll(started - this.options.graceMs);
      this.options.onFlush?.(stats, this.options.clock.now() - started);
    } catch (e) {
      this.options.onError?.(e);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
