import { freshBucket, redisUrl, s3Env, tempDir, uniqueNamespace } from './servers.js';

/** The two ways S4 runs: everything embedded, or on the real Redis and S3 servers. */
export const MODES = ['embedded', 'redis+s3'] as const;
export type Mode = (typeof MODES)[number];

export async function modeEnv(mode: Mode, extra: Record<string, string> = {}): Promise<Record<string, string>> {
  const base = { S4_DATA_DIR: tempDir('e2e'), S4_NAMESPACE: uniqueNamespace(), S4_FLUSH_INTERVAL_MS: '3600000', ...extra };
  if (mode === 'embedded') return base;
  const { bucket, store } = await freshBucket();
  await store.close();
  const { endpoint, region } = s3Env();
  return {
    ...base,
    S4_REDIS_URL: redisUrl(),
    S4_S3_BUCKET: bucket,
    S4_S3_ENDPOINT: endpoint,
    S4_S3_FORCE_PATH_STYLE: 'true',
    AWS_REGION: region,
    AWS_ACCESS_KEY_ID: process.env.AWS_ACCESS_KEY_ID ?? '',
    AWS_SECRET_ACCESS_KEY: process.env.AWS_SECRET_ACCESS_KEY ?? '',
  };
}
