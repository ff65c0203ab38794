import { runRoleThread } from '../threads/thread-host.js';
import { createSegmentRoot } from './segment.root.js';

/**
 * Entry of the segment worker thread. Every S4_FLUSH_INTERVAL_MS it flushes the windows that
 * closed more than their namespace's hot time ago (S4_FLUSH_GRACE_MS by default); POST /v1/admin/flush flushes every closed window now,
 * and POST /v1/admin/rebuild-catalog runs here too.
 */
await runRoleThread(async (config, hot, clock) => {
  const root = await createSegmentRoot(config, hot, clock);
  return {
    intervalMs: config.flush.intervalMs,
    pass: (trigger) => root.flush(trigger),
    calls: { 'rebuild-catalog': () => root.rebuildCatalogs() },
    close: () => root.close(),
  };
});
