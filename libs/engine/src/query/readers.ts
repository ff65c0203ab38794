import type { HotTier } from '@s4/core';
import type { TombstoneSource } from '../deletes/tombstones.js';
import type { QueryPlanner } from './planner.js';
import type { RawReader } from './raw-reader.js';
import type { RollupReader } from './rollup-reader.js';

/** What the query operations (raw, latest, series, aggregate) read through. */
export interface Readers {
  readonly hot: HotTier;
  readonly planner: QueryPlanner;
  readonly raw: RawReader;
  readonly rollups: RollupReader;
  /** Object reads in flight per query. */
  readonly concurrency: number;
  readonly tombstones?: TombstoneSource | undefined;
}
