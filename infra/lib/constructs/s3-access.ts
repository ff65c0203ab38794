import * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import { ROLES, type Role } from '@s4/core';
import { prefixes } from './data-bucket.js';

/**
 * The roles a task can run as (S4_ROLE values that get a task role of their own): the app's roles
 * and the planned ones, whose access is written down already so that a role moved from
 * PLANNED_ROLES to ROLES in @s4/core deploys without a change here. The settings refuse planned
 * roles, so their entries are not used until then. No role is planned today (a new one joins
 * this type again as `| PlannedRole`).
 */
export type TaskRole = Role;

/** What one role may do to which kind of object. Every other key is out of reach. */
interface Access {
  /** Object kinds readable. */
  read: Kind[];
  /** Object kinds writable (PutObject, AbortMultipartUpload). */
  write: Kind[];
  /** Object kinds deletable. */
  delete: Kind[];
  /** May create v1/manifest.json, only if it does not exist yet (If-None-Match: *). */
  createManifest: boolean;
}
const KINDS = ['seg', 'cat', 'rollup', 'manifest'] as const;
type Kind = (typeof KINDS)[number];

/**
 * The access matrix. The API in role `api` only reads (ingest goes to the hot tier); the segment
 * worker owns seg/ and cat/; the aggregate worker reads them and owns rollup/. Planned: the
 * compactor folds parts (reads and writes seg/ and cat/, where its pending-deletes list lives, and
 * deletes folded parts); ingest only talks to Kafka and the hot tier (it reads the manifest for
 * the shard count).
 */
const OWN: Record<Exclude<TaskRole, 'all'>, Access> = {
  api: { read: ['seg', 'cat', 'rollup', 'manifest'], write: [], delete: [], createManifest: false },
  segment: { read: ['seg', 'cat', 'manifest'], write: ['seg', 'cat'], delete: ['seg', 'cat'], createManifest: true },
  aggregate: { read: ['seg', 'cat', 'rollup', 'manifest'], write: ['rollup'], delete: [], createManifest: false },
  compact: { read: ['seg', 'cat', 'manifest'], write: ['seg', 'cat'], delete: ['seg', 'cat'], createManifest: false },
  ingest: { read: ['manifest'], write: [], delete: [], createManifest: false },
};

/** `all` runs every role the app implements, so it gets the union of theirs (and only theirs). */
function union(roles: readonly Exclude<TaskRole, 'all'>[]): Access {
  const any = (pick: (a: Access) => Kind[]) => KINDS.filter((k) => roles.some((r) => pick(OWN[r]).includes(k)));
  return {
    read: any((a) => a.read),
    write: any((a) => a.write),
    delete: any((a) => a.delete),
    createManifest: roles.some((r) => OWN[r].createManifest),
  };
}

export const ACCESS: Record<TaskRole, Access> = {
  ...OWN,
  all: union(ROLES.filter((r): r is Exclude<Role, 'all'> => r !== 'all')),
};

/** Object ARNs of one kind in the listed namespaces. */
function arns(bucket: s3.IBucket, root: string, kind: Kind, namespaces: readonly string[]): string[] {
  const p = prefixes(root);
  if (kind === 'manifest') return [bucket.arnForObjects(p.manifest)];
  return namespaces.map((ns) => bucket.arnForObjects(`${p[kind](ns)}*`));
}

/**
 * IAM statements for one role: object actions only on its own prefixes (per namespace, no
 * wildcard namespace), ListBucket on this one bucket, and KMS use of the bucket key if any.
 */
export function s3Statements(
  role: TaskRole,
  bucket: s3.IBucket,
  root: string,
  namespaces: readonly string[],
  key?: kms.IKey,
): iam.PolicyStatement[] {
  const access = ACCESS[role];
  const list = (kinds: Kind[]) => kinds.flatMap((k) => arns(bucket, root, k, namespaces));
  const out: iam.PolicyStatement[] = [];
  if (access.read.length > 0) {
    out.push(new iam.PolicyStatement({ sid: 'ReadOwnPrefixes', actions: ['s3:GetObject'], resources: list(access.read) }));
    // Without ListBucket, S3 answers 403 instead of 404 for an absent key, which S4 must tell
    // apart (first start, catalog rebuild). It exposes key names only, of this bucket only.
    out.push(new iam.PolicyStatement({ sid: 'ListDataBucket', actions: ['s3:ListBucket'], resources: [bucket.bucketArn] }));
  }
  if (access.write.length > 0) {
    out.push(
      new iam.PolicyStatement({
        sid: 'WriteOwnPrefixes',
        actions: ['s3:PutObject', 's3:AbortMultipartUpload'],
        resources: list(access.write),
      }),
    );
  }
  if (access.delete.length > 0) {
    out.push(new iam.PolicyStatement({ sid: 'DeleteOwnPrefixes', actions: ['s3:DeleteObject'], resources: list(access.delete) }));
  }
  if (access.createManifest) {
    out.push(
      new iam.PolicyStatement({
        sid: 'CreateManifestOnce',
        actions: ['s3:PutObject'],
        resources: arns(bucket, root, 'manifest', namespaces),
        // Only a conditional create (If-None-Match: *): the manifest can never be overwritten.
        conditions: { Null: { 's3:if-none-match': 'false' } },
      }),
    );
  }
  if (key) {
    const writes = access.write.length > 0 || access.createManifest;
    out.push(
      new iam.PolicyStatement({
        sid: 'UseBucketKey',
        actions: writes ? ['kms:Decrypt', 'kms:GenerateDataKey'] : ['kms:Decrypt'],
        resources: [key.keyArn],
        conditions: { StringEquals: { 'kms:ViaService': `s3.${bucket.stack.region}.amazonaws.com` } },
      }),
    );
  }
  return out;
}
