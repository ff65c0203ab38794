import { DAY_MS } from '@s4/core';
import { runRoleThread } from '../threads/thread-host.js';
import { createAggregateRoot } from './aggregate.root.js';

/**
 * Entry of the aggregate (rollup) worker thread. Every S4_ROLLUP_INTERVAL_MS it re-checks the
 * days of the last S4_ROLLUP_LOOKBACK_MS; POST /v1/admin/rollup checks every day now.
 */
await runRoleThread(async (config, hot, clock) => {
  const root = await createAggregateRoot(config, hot, clock);
  return {
    intervalMs: config.rollup.intervalMs,
    pass: (trigger) => {
      const now = clock.now();
      return root.rollup(trigger === 'periodic' ? now - config.rollup.lookbackMs : 0, now + DAY_MS);
    },
    close: () => root.close(),
  };
});
