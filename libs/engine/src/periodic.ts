/**
 * Runs one pass of a background job every `intervalMs`, never two passes at once; a failing
 * pass is reported and the next one runs on schedule. A pass that resolves `true` left work
 * behind (the segment worker: a backlog of closed windows still arriving), and the next one
 * starts after `soonMs` instead. Used by the segment, aggregation and compaction workers.
 */
export class PeriodicWorker {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = true;

  constructor(
    private readonly intervalMs: number,
    private readonly pass: () => Promise<boolean | void>,
    private readonly onError: (error: unknown) => void,
    private readonly soonMs = intervalMs,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  private schedule(delayMs = this.intervalMs): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      let soon = false;
      this.running = this.pass()
        .then((more) => void (soon = more === true), this.onError)
        .finally(() => {
          this.running = null;
          this.schedule(soon ? Math.min(this.soonMs, this.intervalMs) : this.intervalMs);
        });
    }, delayMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
