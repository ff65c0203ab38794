import { runRoleThread } from '../threads/thread-host.js';
import { createSegmentRoot } from './segment.root.js';

/**
 * Entry of the segment worker thread. Every S4_FLUSH_INTERVAL_MS it flushes the windows that
 * closed more than S4_FLUSH_GRACE_MS ago; POST /v1/admin/flush flushes every closed window now,
 * and POST /v1/admin/rebuild-catalog runs here too.
 */
await runRoleThread((config, hot, clock) => {
  const root = createSegmentRoot(config, hot, clock);
  return {
    intervalMs: config.flush.intervalMs,
    pass: (trigger) => root.flush(trigger === 'periodic' ? clock.now() - config.flush.graceMs : clock.now()),
    calls: { 'rebuild-catalog': () => root.rebuildCatalogs() },
    close: () => root.close(),
  };
});
