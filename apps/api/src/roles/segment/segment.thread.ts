import type { FlushStats } from '@s4/engine';
import { runRoleThread } from '../threads/thread-host.js';
import { createSegmentRoot } from './segment.root.js';

/**
 * Entry of the segment worker thread. Every S4_FLUSH_INTERVAL_MS it flushes the windows that
 * closed more than their namespace's hot time ago (S4_FLUSH_GRACE_MS by default; late data into a
 * window flushed less than S4_FLUSH_LATE_MS ago may wait), and a second
 * after a pass that released at least S4_FLUSH_BACKLOG_BYTES (data still arriving into closed
 * windows); POST /v1/admin/flush flushes every closed window now, and POST /v1/admin/rebuild-catalog runs here too.
 */
await runRoleThread(async (config, hot, clock) => {
  const root = await createSegmentRoot(config, hot, clock);
  return {
    intervalMs: config.flush.intervalMs,
    pass: (trigger) => root.flush(trigger),
    backlog: (stats) => config.flush.backlogBytes > 0 && (stats as FlushStats).hotBytes >= config.flush.backlogBytes,
    calls: { 'rebuild-catalog': () => root.rebuildCatalogs() },
    close: () => root.close(),
  };
});
