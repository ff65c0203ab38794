/** Resolutions stored in every rollup object; coarser ones (1 d, ...) are folded from 1 h at read time. */
export const ROLLUP_RESOLUTIONS = [
  { name: '1m', ms: 60_000 },
  { name: '1h', ms: 3_600_000 },
] as const;

export type RollupResolution = (typeof ROLLUP_RESOLUTIONS)[number]['name'];

/** Day rollup objects hold the buckets of this resolution (rollup.md). */
export const DAY_ROLLUP_RESOLUTION: RollupResolution = '1h';

/** The coarsest stored resolution that divides `step`, or null when none does (raw data answers). */
export function rollupResolutionFor(step: number): RollupResolution | null {
  for (let i = ROLLUP_RESOLUTIONS.length - 1; i >= 0; i--) if (step % ROLLUP_RESOLUTIONS[i]!.ms === 0) return ROLLUP_RESOLUTIONS[i]!.name;
  return null;
}

/** Footer entry ids of a rollup object: `<series id>.<resolution>`. */
export function rollupSeriesId(id: string, resolution: RollupResolution): string {
  return `${id}.${resolution}`;
}
