/** Segment windows are one hour, aligned to the epoch. */
export const WINDOW_MS = 3_600_000;
export const DAY_MS = 86_400_000;

export function windowStart(ts: number, windowMs = WINDOW_MS): number {
  return Math.floor(ts / windowMs) * windowMs;
}

/** Every window start whose window overlaps the half-open range [from, to). */
export function windowsOverlapping(from: number, to: number, windowMs = WINDOW_MS): number[] {
  const out: number[] = [];
  if (to <= from) return out;
  for (let w = windowStart(from, windowMs); w < to; w += windowMs) out.push(w);
  return out;
}

/** All time flows through a clock so that tests and workers agree on "now". */
export interface Clock {
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

/**
 * Milliseconds since some base time as V8 holds a small integer (`| 0` when it fits in 30 bits),
 * for maps and objects that keep a time per series: an epoch time, or any result of arithmetic
 * on one, is a heap number of its own (12 bytes and an object for the GC) wherever it is stored.
 * Past 12 days since the base the value is returned as it is (a heap number again, still exact).
 */
export function smallMs(ms: number): number {
  return ms >= 0 && ms < 2 ** 30 ? ms | 0 : ms;
}
