import { runRoleThread } from '../threads/thread-host.js';
import { createCompactRoot } from './compact.root.js';

/**
 * Entry of the compact worker thread. Every S4_COMPACT_INTERVAL_MS it folds the windows that have
 * at least S4_COMPACT_MIN_PARTS parts and ended S4_COMPACT_SETTLE_MS ago, and deletes replaced
 * parts whose grace has passed; POST /v1/admin/compact runs the same pass now.
 */
await runRoleThread(async (config, hot, clock) => {
  const root = await createCompactRoot(config, hot, clock);
  return {
    intervalMs: config.compact.intervalMs,
    pass: () => root.compact(),
    close: () => root.close(),
  };
});
