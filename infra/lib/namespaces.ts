import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { lifecycleDays, type NamespacePolicies } from '@s4/core';
import { parseNamespaces } from '@s4/config';

/** Days after which S3 may expire each kind of a namespace's objects; absent: never. */
export interface NamespaceLifecycle {
  readonly name: string;
  readonly segDays?: number;
  readonly catDays?: number;
  readonly rollupDays?: number;
}

const REPO = fileURLToPath(new URL('../../', import.meta.url));

/**
 * The namespace policy file the containers run with (S4_NAMESPACES_FILE), read with the engine's
 * own parser, so the stack's lifecycle rules come from the very numbers its retention job uses.
 * A relative path is taken from the repository root.
 */
export function readPolicyFile(file: string, defaults: { defaultNamespace: string; shards: number }): NamespacePolicies {
  const path = isAbsolute(file) ? file : resolve(REPO, file);
  // Only names, shards and retention matter here; the rest of the defaults are the app's.
  return parseNamespaces(path, readFileSync(path, 'utf8'), { ...defaults, hotMs: 300_000, maxFields: 10_000, maxRecordBytes: 16 * 1024 * 1024 });
}

/**
 * S3 lifecycle days per namespace from the policies: a backstop behind the engine's retention
 * (core lifecycleDays: retention + one day + the compactor's delete grace, in whole days), never
 * ahead of it, so S3 never takes an object a catalog still names.
 */
export function lifecycleFromPolicies(policies: NamespacePolicies, deleteGraceMs: number): NamespaceLifecycle[] {
  return policies.namespaces.map((p) => {
    const d = lifecycleDays(p, deleteGraceMs);
    return { name: p.name, ...(d.seg !== undefined ? { segDays: d.seg } : {}), ...(d.cat !== undefined ? { catDays: d.cat } : {}), ...(d.rollup !== undefined ? { rollupDays: d.rollup } : {}) };
  });
}
