import { readFile } from 'node:fs/promises';
import { unwatchFile, watchFile } from 'node:fs';
import { NamespaceSet } from '@s4/core';
import { NamespacesFileError, parseNamespaces, policyDefaults, refusedChanges, singleNamespace, type Config } from '@s4/config';

export interface PolicyLog {
  log(message: string): void;
  error(message: string): void;
}

/** How often the file's mtime and size are polled: a new limit applies within about this long. */
const POLL_MS = 250;

/**
 * The namespace policies in force (S4_NAMESPACES_FILE): loaded at start (a bad file stops the
 * start), then reloaded whenever the file changes. A bad edit, or one that changes a namespace's
 * shard count or removes a namespace, is refused with a log line naming the problem, and the
 * policies in force stay. Polling (fs.watchFile) rather than fs.watch: editors and config
 * managers replace files by rename, which an inotify watch on the old inode would miss.
 *
 * Without a file: one namespace from S4_NAMESPACE and S4_SHARDS, as S4 always had, never reloaded.
 */
export class PolicyWatcher {
  private set: NamespaceSet;
  private reloading: Promise<void> = Promise.resolve();
  private readonly listeners: ((set: NamespaceSet) => void)[] = [];
  private watching = false;
  private readonly refusals: ((problem: string) => void)[] = [];

  private constructor(
    private readonly config: Config,
    initial: NamespaceSet,
    private readonly log: PolicyLog,
    /** Checks a set against the store (namespace manifests) before it is put in force; throws to refuse. */
    private readonly verify?: (set: NamespaceSet) => Promise<void>,
  ) {
    this.set = initial;
  }

  static async start(config: Config, log: PolicyLog, verify?: (set: NamespaceSet) => Promise<void>): Promise<PolicyWatcher> {
    const file = config.namespacesFile;
    const initial = new NamespaceSet(file === undefined ? singleNamespace(policyDefaults(config)) : parseNamespaces(file, await readPolicyFile(file), policyDefaults(config)));
    await verify?.(initial);
    const w = new PolicyWatcher(config, initial, log, verify);
    if (file !== undefined) {
      watchFile(file, { interval: POLL_MS, persistent: false }, () => {
        w.reloading = w.reloading.then(async () => {
          await w.reload();
        });
      });
      w.watching = true;
    }
    return w;
  }

  /** The policies in force now. */
  current(): NamespaceSet {
    return this.set;
  }

  onChange(listener: (set: NamespaceSet) => void): void {
    this.listeners.push(listener);
  }

  onRefused(listener: (problem: string) => void): void {
    this.refusals.push(listener);
  }

  /** Read the file again now (the poll does this on every change). Resolves once it is in force or refused. */
  async reload(): Promise<boolean> {
    const file = this.config.namespacesFile;
    if (file === undefined) return false;
    let next: NamespaceSet;
    try {
      const policies = parseNamespaces(file, await readPolicyFile(file), policyDefaults(this.config));
      const refused = refusedChanges(this.set.policies, policies);
      if (refused.length > 0) throw new NamespacesFileError(file, refused);
      next = new NamespaceSet(policies);
      await this.verify?.(next);
    } catch (e) {
      const problem = `namespace policies not reloaded, the ones in force stay: ${(e as Error).message}`;
      this.log.error(problem);
      for (const l of this.refusals) l(problem);
      return false;
    }
    this.set = next;
    this.log.log(`namespace policies reloaded from ${file}: ${next.all.map((n) => n.name).join(', ')}`);
    for (const l of this.listeners) l(next);
    return true;
  }

  async close(): Promise<void> {
    if (this.watching && this.config.namespacesFile !== undefined) unwatchFile(this.config.namespacesFile);
    this.watching = false;
    await this.reloading;
  }
}

async function readPolicyFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new NamespacesFileError(file, [`cannot be read: ${(e as Error).message}`]);
  }
}
