import type { NamespacePolicy } from '@s4/core';
import type { Config } from '@s4/config';
import { PolicyWatcher } from './policy-watcher.js';

/**
 * One instance of a worker's engine object (Flusher, RollupBuilder, Compactor, ...) per namespace,
 * built the first time a pass meets the namespace. A namespace keeps its name and shard count for
 * the life of a process (the watcher refuses changing either), so an instance never goes stale;
 * the policy a pass reads (hot time, retention) is always the one in force.
 */
export class PerNamespace<T> {
  private readonly made = new Map<string, T>();

  constructor(private readonly build: (policy: NamespacePolicy) => T) {}

  for(policy: NamespacePolicy): T {
    let t = this.made.get(policy.name);
    if (!t) this.made.set(policy.name, (t = this.build(policy)));
    return t;
  }
}

/**
 * The policies as a worker thread sees them: the same file, watched by the thread itself. The
 * main thread logs refused reloads (it refuses the same edits), so the thread stays quiet.
 */
export function threadPolicies(config: Config): Promise<PolicyWatcher> {
  return PolicyWatcher.start(config, { log: () => undefined, error: () => undefined });
}
