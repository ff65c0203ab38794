/** Add every counter of `s` to `total` (pass statistics of shards summed into the pass's). */
export function addCounts<T extends { [K in keyof T]: number }>(total: T, s: T): void {
  for (const k of Object.keys(s) as (keyof T)[]) total[k] = (total[k] + s[k]) as T[keyof T];
}
