import { resolutionMs } from '@s4/format';

/** A bucket width a rollup may store, named as in footer entry ids (`1m`, `1h`). */
export interface Resolution {
  readonly name: string;
  readonly ms: number;
}

/**
 * Resolutions the builder considers for every series (rollup.md, "Which resolutions a series
 * has"); coarser steps (1 d, ...) fold the coarsest stored one at read time.
 */
export const ROLLUP_RESOLUTIONS: readonly Resolution[] = [
  { name: '1m', ms: 60_000 },
  { name: '1h', ms: 3_600_000 },
];

/** A bucket keeps five numbers per field that cost like samples: sum, min, max, first, last. */
export const BUCKET_VALUES = 5;

/**
 * A resolution is stored for a series only where it cuts the numbers a query reads at least this
 * many times: its buckets hold on average `MIN_REDUCTION × BUCKET_VALUES` samples or more.
 */
export const MIN_REDUCTION = 4;

/** Whether `samples` numeric values falling into `buckets` buckets make a resolution worth storing. */
export function pays(samples: number, buckets: number, minReduction = MIN_REDUCTION): boolean {
  return buckets > 0 && samples >= minReduction * BUCKET_VALUES * buckets;
}

/** Whether some resolution of `known` divides `step`, so that a rollup can answer it at all. */
export function rollupsCanAnswer(step: number, known: readonly Resolution[] = ROLLUP_RESOLUTIONS): boolean {
  return known.some((r) => step % r.ms === 0);
}

/** Of the resolutions a series has stored, the coarsest that divides `step`, or null (read raw). */
export function pickResolution(step: number, stored: Iterable<string>): string | null {
  let best: string | null = null;
  let bestMs = 0;
  for (const name of stored) {
    const ms = resolutionMs(name);
    if (ms !== null && step % ms === 0 && ms > bestMs) {
      best = name;
      bestMs = ms;
    }
  }
  return best;
}
