import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { KEY_FOLDERS, KEY_VERSION, MANIFEST_KEY, folderPrefix } from '@s4/core';
import type { Settings } from '../config.js';
import type { NamespaceLifecycle } from '../namespaces.js';

/**
 * Object-key prefixes under `<S4_S3_PREFIX>`, from the key grammar in @s4/core (keys.md), so that
 * retention and IAM rules cannot drift from the names S4 writes.
 */
export const prefixes = (root: string) => ({
  /** Every S4 object. */
  all: `${root}${KEY_VERSION}/`,
  manifest: `${root}${MANIFEST_KEY}`,
  /** Per-namespace kinds, with `*` standing for any namespace (IAM resource patterns). */
  seg: (ns: string) => `${root}${folderPrefix(ns, KEY_FOLDERS.segments)}`,
  cat: (ns: string) => `${root}${folderPrefix(ns, KEY_FOLDERS.catalogs)}`,
  rollup: (ns: string) => `${root}${folderPrefix(ns, KEY_FOLDERS.rollups)}`,
});

/** One lifecycle rule per (namespace, kind) that expires: segments, catalogs and rollups. */
export function lifecycleRulesFor(root: string, namespaces: readonly NamespaceLifecycle[], tieringAfterDays: number | undefined): s3.LifecycleRule[] {
  const p = prefixes(root);
  const rules: s3.LifecycleRule[] = [];
  for (const ns of namespaces) {
    const kinds: [string, string, number | undefined, boolean][] = [
      ['seg', p.seg(ns.name), ns.segDays, true],
      ['cat', p.cat(ns.name), ns.catDays, false],
      ['rollup', p.rollup(ns.name), ns.rollupDays, true],
    ];
    for (const [kind, prefix, days, tier] of kinds) {
      if (days === undefined) continue;
      // Catalogs are small and read on every query: keep them in Standard.
      const tiering = tier && tieringAfterDays !== undefined && tieringAfterDays < days;
      rules.push({
        id: `${ns.name}-${kind}-expire-${days}d`,
        prefix,
        expiration: Duration.days(days),
        transitions: tiering
          ? [{ storageClass: s3.StorageClass.INTELLIGENT_TIERING, transitionAfter: Duration.days(tieringAfterDays) }]
          : undefined,
      });
    }
  }
  return rules;
}

export interface DataBucketProps {
  readonly settings: Settings;
  /** Where S3 server access logs go (absent = off). */
  readonly accessLogBucket?: s3.IBucket;
}

/**
 * The bucket that holds every segment, catalog, rollup and the manifest: private, TLS-only,
 * encrypted, with lifecycle rules derived from the namespaces' retention.
 */
export class DataBucket extends Construct {
  readonly bucket: s3.Bucket;
  readonly key?: kms.Key;
  readonly prefix: string;

  constructor(scope: Construct, id: string, props: DataBucketProps) {
    super(scope, id);
    const { settings } = props;
    const b = settings.bucket;
    const destroy = settings.removalPolicy === 'destroy';
    this.prefix = b.prefix;

    if (b.encryption === 'kms') {
      this.key = new kms.Key(this, 'Key', {
        description: `S4 ${settings.name} data bucket`,
        enableKeyRotation: true,
        removalPolicy: destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      });
    }

    this.bucket = new s3.Bucket(this, 'Bucket', {
      bucketName: b.bucketName,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      minimumTLSVersion: 1.2,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_ENFORCED,
      encryption: this.key ? s3.BucketEncryption.KMS : s3.BucketEncryption.S3_MANAGED,
      encryptionKey: this.key,
      // With KMS, S3 Bucket Keys cut KMS requests (and their cost) by orders of magnitude.
      bucketKeyEnabled: this.key ? true : undefined,
      // Segments are immutable and written once under fenced names: versioning would only add cost.
      versioned: false,
      serverAccessLogsBucket: props.accessLogBucket,
      serverAccessLogsPrefix: props.accessLogBucket ? 's3-data/' : undefined,
      lifecycleRules: [
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(b.abortIncompleteUploadDays) },
        ...lifecycleRulesFor(b.prefix, settings.lifecycle, b.intelligentTieringAfterDays),
      ],
      removalPolicy: destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      autoDeleteObjects: destroy,
    });

    if (!props.accessLogBucket) {
      Validations.of(this.bucket).acknowledge({
        id: 'AwsSolutions-S1',
        reason: `Server access logs are off in ${settings.name} by setting (bucket.accessLogs=false) to keep idle cost at zero; staging and prod enable them.`,
      });
    }
  }
}

export interface AccessLogBucketProps {
  readonly settings: Settings;
}

/** Receives S3 server access logs and ALB access logs (SSE-S3: ALB log delivery cannot use KMS). */
export class AccessLogBucket extends Construct {
  readonly bucket: s3.Bucket;

  constructor(scope: Construct, id: string, props: AccessLogBucketProps) {
    super(scope, id);
    const destroy = props.settings.removalPolicy === 'destroy';
    this.bucket = new s3.Bucket(this, 'Bucket', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      encryption: s3.BucketEncryption.S3_MANAGED,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [
        { id: 'expire-logs', expiration: Duration.days(props.settings.bucket.accessLogRetentionDays) },
        { id: 'abort-incomplete-multipart', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: destroy ? RemovalPolicy.DESTROY : RemovalPolicy.RETAIN,
      autoDeleteObjects: destroy,
    });
    Validations.of(this.bucket).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This is the access-log bucket itself; logging it into itself would loop and logging it elsewhere adds a bucket with the same question.',
    });
  }
}
