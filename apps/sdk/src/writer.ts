import { S4ClosedError, S4WriteError } from './errors.js';
import type { RetryEvent } from './transport.js';
import type { Sample } from './types.js';
import { assertSamples } from './validate.js';

export interface WriterOptions {
  /** Samples per request. Default 5 000. */
  maxBatch?: number;
  /** A partly filled batch is sent after this many milliseconds. Default 1 000. */
  flushMs?: number;
  /** Requests in flight at once. Default 4. */
  concurrency?: number;
  /**
   * Samples held in memory (being filled, queued or in flight) before `write()` waits for the
   * server to acknowledge some. Default `maxBatch * concurrency * 2`.
   */
  maxBuffered?: number;
  /** Called once when the writer gives up (the same error flush(), close() and write() reject with). */
  onError?: (error: S4WriteError) => void;
  /** Called before each retry of a batch. */
  onRetry?: (event: RetryEvent) => void;
}

export interface WriterStats {
  /** Samples accepted by `write()` and not yet acknowledged. */
  buffered: number;
  /** Requests on the wire. */
  inFlight: number;
  /** Samples the server has acknowledged. */
  acknowledged: number;
  /** Requests the server has acknowledged. */
  batches: number;
  /** Retried requests. */
  retries: number;
}

export type SendBatch = (batch: Sample[], onRetry: (event: RetryEvent) => void) => Promise<void>;

interface Batch {
  samples: Sample[];
  done: Promise<void>;
  finish: () => void;
}

/**
 * Buffers samples and sends them in batches, several at once, retrying what can be retried.
 * Memory is bounded: `await writer.write(s)` waits while `maxBuffered` samples are unacknowledged.
 *
 * ```ts
 * const writer = client.writer({ maxBatch: 5000, flushMs: 1000 });
 * for await (const s of source) await writer.write(s);
 * await writer.close(); // sends the rest; rejects with S4WriteError if anything was lost
 * ```
 */
export class S4Writer {
  readonly #send: SendBatch;
  readonly #maxBatch: number;
  readonly #flushMs: number;
  readonly #concurrency: number;
  readonly #maxBuffered: number;
  readonly #onError: ((error: S4WriteError) => void) | undefined;
  readonly #onRetry: ((event: RetryEvent) => void) | undefined;

  #current: Sample[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  readonly #queue: Batch[] = [];
  readonly #unfinished = new Set<Batch>();
  #inFlight = 0;
  #buffered = 0;
  #acknowledged = 0;
  #batches = 0;
  #retries = 0;
  #spaceWaiters: (() => void)[] = [];
  #error: S4WriteError | undefined;
  #closing: Promise<void> | undefined;

  constructor(send: SendBatch, options: WriterOptions = {}) {
    this.#send = send;
    this.#maxBatch = positive(options.maxBatch ?? 5000, 'maxBatch');
    this.#flushMs = nonNegative(options.flushMs ?? 1000, 'flushMs');
    this.#concurrency = positive(options.concurrency ?? 4, 'concurrency');
    this.#maxBuffered = positive(options.maxBuffered ?? this.#maxBatch * this.#concurrency * 2, 'maxBuffered');
    this.#onError = options.onError;
    this.#onRetry = options.onRetry;
  }

  /**
   * Accepts one sample or an array. Resolves once the samples are buffered and there is room for
   * more; rejects with S4WriteError after a failure, S4ClosedError after close(), and
   * S4ValidationError (nothing buffered) for a malformed sample.
   */
  async write(samples: Sample | readonly Sample[]): Promise<void> {
    if (this.#error !== undefined) throw this.#error;
    if (this.#closing !== undefined) throw new S4ClosedError('write() after close(): create a new writer');
    const list: readonly Sample[] = Array.isArray(samples) ? samples : [samples as Sample];
    assertSamples(list);
    for (const sample of list) {
      this.#current.push(sample);
      this.#buffered++;
      if (this.#current.length >= this.#maxBatch) this.#seal();
    }
    if (this.#current.length > 0 && this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#seal(), this.#flushMs);
    }
    if (this.#buffered >= this.#maxBuffered) this.#seal(); // no point waiting for the timer while blocked
    while (this.#buffered >= this.#maxBuffered && this.#error === undefined) {
      await new Promise<void>((resolve) => this.#spaceWaiters.push(resolve));
    }
    if (this.#error !== undefined) throw this.#error;
  }

  /** Sends what is buffered and waits until everything written so far is acknowledged. */
  async flush(): Promise<void> {
    this.#seal();
    await Promise.all([...this.#unfinished].map((b) => b.done));
    if (this.#error !== undefined) throw this.#error;
  }

  /** Flushes and stops accepting samples. Safe to call more than once. */
  close(): Promise<void> {
    this.#closing ??= this.flush();
    return this.#closing;
  }

  stats(): WriterStats {
    return { buffered: this.#buffered, inFlight: this.#inFlight, acknowledged: this.#acknowledged, batches: this.#batches, retries: this.#retries };
  }

  #seal(): void {
    if (this.#timer !== undefined) {
      clearTimeout(this.#timer);
      this.#timer = undefined;
    }
    if (this.#current.length === 0) return;
    let finish!: () => void;
    const done = new Promise<void>((resolve) => (finish = resolve));
    const batch: Batch = { samples: this.#current, done, finish };
    this.#current = [];
    this.#queue.push(batch);
    this.#unfinished.add(batch);
    this.#pump();
  }

  #pump(): void {
    while (this.#inFlight < this.#concurrency && this.#error === undefined) {
      const batch = this.#queue.shift();
      if (batch === undefined) return;
      this.#inFlight++;
      const n = batch.samples.length;
      this.#send(batch.samples, (event) => {
        this.#retries++;
        this.#onRetry?.(event);
      })
        .then(
          () => {
            this.#acknowledged += n;
            this.#batches++;
          },
          (error: unknown) => this.#fail(error),
        )
        .finally(() => {
          this.#inFlight--;
          this.#release(batch);
          this.#pump();
        });
    }
  }

  #release(batch: Batch): void {
    this.#buffered -= batch.samples.length;
    this.#unfinished.delete(batch);
    batch.finish();
    if (this.#buffered < this.#maxBuffered || this.#error !== undefined) {
      const waiters = this.#spaceWaiters;
      this.#spaceWaiters = [];
      for (const wake of waiters) wake();
    }
  }

  #fail(cause: unknown): void {
    if (this.#error !== undefined) return;
    this.#error = new S4WriteError(cause, this.#buffered);
    // Nothing more will be sent: drop what waits, so flush() and close() settle now.
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#buffered -= this.#current.length;
    this.#current = [];
    for (const batch of this.#queue.splice(0)) this.#release(batch);
    this.#onError?.(this.#error);
  }
}

function positive(value: number, name: string): number {
  if (!Number.isInteger(value) || value < 1) throw new RangeError(`writer option ${name} must be a positive integer, got ${value}`);
  return value;
}

function nonNegative(value: number, name: string): number {
  if (!Number.isFinite(value) || value < 0) throw new RangeError(`writer option ${name} must be >= 0, got ${value}`);
  return value;
}
