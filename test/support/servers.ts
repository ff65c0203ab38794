import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { S3ObjectStore } from '@s4/storage';

/**
 * Where the real servers are: scripts/test.sh starts them and exports these variables. A suite
 * that needs one fails loudly when it is missing, rather than skipping.
 */
export function redisUrl(): string {
  const url = process.env.S4_REDIS_URL;
  if (!url) throw new Error('S4_REDIS_URL is not set: run the tests with `npm test`, which starts Redis');
  return url;
}

export function s3Env(): { endpoint: string; region: string } {
  const endpoint = process.env.S4_S3_ENDPOINT;
  if (!endpoint) throw new Error('S4_S3_ENDPOINT is not set: run the tests with `npm test`, which starts the S3 server');
  return { endpoint, region: process.env.AWS_REGION ?? 'us-east-1' };
}

export function tempDir(label: string): string {
  return mkdtempSync(join(tmpdir(), `s4-${label}-`));
}

/** A fresh bucket on the test S3 server, so suites never see each other's objects. */
export async function freshBucket(): Promise<{ bucket: string; store: S3ObjectStore }> {
  const { endpoint, region } = s3Env();
  const bucket = `s4-test-${randomUUID().slice(0, 13)}`;
  const store = new S3ObjectStore({ bucket, prefix: '', region, endpoint, forcePathStyle: true, maxSockets: 16 });
  await store.ensureBucket();
  return { bucket, store };
}

export function uniqueNamespace(): string {
  return `t${randomUUID().replaceAll('-', '').slice(0, 12)}`;
}
