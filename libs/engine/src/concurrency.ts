import { bulkTurn } from '@s4/core';

/** Run `fn` over `items` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async () => {
    // After a failure the answer is that failure: start nothing more.
    while (next < items.length && !failed) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/**
 * Time slices for long loops on the HTTP thread: `if (slices.due()) await slices.pause();` gives the
 * event loop a turn once `ms` have run since the last one, and urgent requests precedence (bulkTurn).
 * One Slices passed through the stages of a piece of work (a write's checks, admission and
 * encoding) keeps its clock across them: each stage starting a clock of its own let a write run
 * the end of one stage and the start of the next without a turn (30 ms at 10 ms slices, measured).
 */
export class Slices {
  private since = performance.now();
  constructor(private readonly ms: number) {}

  /** `s` itself, or a clock of `s` milliseconds. */
  static of(s: number | Slices): Slices {
    return s instanceof Slices ? s : new Slices(s);
  }

  due(): boolean {
    return performance.now() - this.since >= this.ms;
  }

  async pause(): Promise<void> {
    await bulkTurn();
    this.since = performance.now();
  }
}

/** Runs a stepwise computation (a generator yielding between steps) to its result at once. */
export function runSteps<T>(steps: Generator<void, T>): T {
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
  }
}

/** runSteps on the HTTP thread: the event loop gets a turn whenever a slice has run `sliceMs` (0: after every step), or on the clock of `slices`. */
export async function runStepsSliced<T>(steps: Generator<void, T>, sliceMs: number | Slices): Promise<T> {
  const slices = Slices.of(sliceMs);
  for (;;) {
    const r = steps.next();
    if (r.done) return r.value;
    if (slices.due()) await slices.pause();
  }
}
