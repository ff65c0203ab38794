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
