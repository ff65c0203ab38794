import { S4Error } from '@s4/core';
import type { CompactStats, FlushStats, RollupStats } from '@s4/engine';
import type { RoleThread } from './role-thread.js';
import type { CallMethod, WorkerRole } from './wire.js';

/**
 * The admin endpoints' way to run a role's pass without running it on the HTTP thread: in the
 * role's thread when this process runs one, otherwise (an api-only process) in a one-off thread
 * of that role, started for the call and stopped after it (one at a time per role).
 */
export class WorkerPasses {
  private readonly oneOffQueue = new Map<WorkerRole, Promise<unknown>>();
  private readonly oneOffs = new Set<RoleThread>();
  private closed = false;

  constructor(
    private readonly running: ReadonlyMap<WorkerRole, RoleThread>,
    private readonly oneOff: (role: WorkerRole) => RoleThread,
  ) {}

  /** Flush every closed window now (no grace period): the segment role's pass. */
  flush(): Promise<FlushStats> {
    return this.run('segment', 'pass');
  }

  /** Compute every missing or stale rollup of every day: the aggregate role's pass. */
  rollup(): Promise<RollupStats> {
    return this.run('aggregate', 'pass');
  }

  /** Fold every window with enough parts and delete what earlier folds replaced (past its grace): the compact role's pass. */
  compact(): Promise<CompactStats> {
    return this.run('compact', 'pass');
  }

  /** Rebuild every catalog from the segment objects (in the segment role's thread). */
  rebuildCatalog(): Promise<{ parts: number }> {
    return this.run('segment', 'rebuild-catalog');
  }

  /** Stop one-off threads still running (the role threads are the process's to stop). */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.oneOffs].map((t) => t.stop()));
  }

  private run<T>(role: WorkerRole, method: CallMethod): Promise<T> {
    const thread = this.running.get(role);
    if (thread) return thread.call<T>(method);
    const previous = this.oneOffQueue.get(role) ?? Promise.resolve();
    const next = previous.catch(() => undefined).then(() => this.once<T>(role, method));
    this.oneOffQueue.set(role, next);
    void next.finally(() => {
      if (this.oneOffQueue.get(role) === next) this.oneOffQueue.delete(role);
    }).catch(() => undefined);
    return next;
  }

  private async once<T>(role: WorkerRole, method: CallMethod): Promise<T> {
    if (this.closed) throw new S4Error('unavailable', `the server is stopping; the ${role} pass did not run`, 503);
    const thread = this.oneOff(role);
    this.oneOffs.add(thread);
    try {
      await thread.start();
      return await thread.call<T>(method);
    } finally {
      await thread.stop();
      this.oneOffs.delete(thread);
    }
  }
}
