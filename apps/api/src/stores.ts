import { MANIFEST_KEY, PreconditionFailedError, namespaceManifestKey, type Clock, type HotTier, type NamespaceSet, type ObjectStore } from '@s4/core';
import type { Config } from '@s4/config';
import { EmbeddedHotTier, FilesystemObjectStore } from '@s4/storage/embedded';
import type { KafkaIngestLog } from '@s4/storage/kafka';
import type { RedisHotTier } from '@s4/storage/redis';
import type { S3ObjectStore } from '@s4/storage/s3';
import { CountingObjectStore, RequestCounts } from '@s4/engine';

/**
 * The two stores, opened from the config. Every composition root uses these: the main thread
 * (which owns the embedded hot tier) and each worker thread (which opens its own Redis
 * connection and object-store client, or reaches the embedded hot tier over hot-tier-rpc).
 *
 * The Redis, S3 and Kafka adapters are imported only when the config names them: their clients
 * (ioredis, the AWS SDK, kafkajs) cost ~40 MB of memory and ~1 s of start in every thread that
 * loads them, which an embedded process (four threads) never uses.
 */

/** The Redis hot tier: one connection per caller (each thread has its own). */
export async function openRedisHotTier(config: Config): Promise<RedisHotTier> {
  if (config.hot.kind !== 'redis') throw new Error('openRedisHotTier: the config names the embedded hot tier');
  const { RedisHotTier } = await import('@s4/storage/redis');
  // Every client option the config holds (cluster, timeouts), the password only when set.
  const { kind: _kind, url, password, ...options } = config.hot;
  return new RedisHotTier(url, { ...options, ...(password ? { password } : {}) });
}

/** The hot tier this process owns. Embedded: opens (and replays) the log; only one thread of one process may. */
export async function openHotTier(config: Config, clock: Clock): Promise<HotTier> {
  if (config.hot.kind === 'redis') return openRedisHotTier(config);
  return EmbeddedHotTier.open({ dir: config.hot.dir, fsync: config.hot.fsync, now: () => clock.now() });
}

/**
 * Object-store requests of this thread per namespace, for the cost report: worker threads send
 * theirs to the main thread after each pass, the main thread adds them to the shared counters.
 */
export const REQUESTS = new RequestCounts();

/** An object-store client (counting its requests in REQUESTS); any number of threads may open one on the same bucket or directory. */
export async function openObjectStore(config: Config): Promise<ObjectStore> {
  if (config.objects.kind !== 's3') return new CountingObjectStore(new FilesystemObjectStore(config.objects.dir), REQUESTS);
  const { S3ObjectStore } = await import('@s4/storage/s3');
  return new CountingObjectStore(new S3ObjectStore(config.objects), REQUESTS);
}

/** The ingest log (S4_INGEST=kafka), or null for direct ingest. Connects on first use. */
export async function openIngestLog(config: Config, log?: (level: 'warn' | 'error', message: string) => void): Promise<KafkaIngestLog | null> {
  if (config.ingest.mode !== 'kafka' || !config.kafka) return null;
  const { KafkaIngestLog } = await import('@s4/storage/kafka');
  return new KafkaIngestLog({ ...config.kafka, shards: config.shards, ...(log ? { log } : {}) });
}

/** Once per process, before anything reads or writes: the bucket exists (custom endpoints) and the manifest agrees. */
export async function prepareObjectStore(objects: ObjectStore, config: Config): Promise<void> {
  const base = objects instanceof CountingObjectStore ? objects.inner : objects;
  if (config.objects.kind === 's3' && config.objects.endpoint) await (base as S3ObjectStore).ensureBucket();
  await checkManifest(objects, config);
}

/**
 * The shard count decides where every series lives, so a store keeps the count it was created
 * with; starting with another count would hide data.
 */
async function checkManifest(objects: ObjectStore, config: Config): Promise<void> {
  const manifest = { format: 1, shards: config.shards };
  const got = await objects.get(MANIFEST_KEY);
  if (got && !got.notModified) {
    const stored = JSON.parse(Buffer.from(got.body).toString('utf8')) as { shards: number };
    if (stored.shards !== config.shards)
      throw new Error(`S4_SHARDS=${config.shards} but this store was created with ${stored.shards} shards; set S4_SHARDS=${stored.shards}`);
    return;
  }
  try {
    await objects.put(MANIFEST_KEY, Buffer.from(JSON.stringify({ ...manifest, createdAt: new Date().toISOString() })), { ifNoneMatch: '*' });
  } catch (e) {
    if (!(e instanceof PreconditionFailedError)) throw e;
    await checkManifest(objects, config);
  }
}

/**
 * Every namespace of the policy file keeps the shard count it was first written with (a
 * namespace removed from the file and added back later must come back with the same count).
 * The process's own namespace is the manifest's (S4_SHARDS, checked at start).
 */
export async function checkNamespaceManifests(objects: ObjectStore, config: Config, set: NamespaceSet): Promise<void> {
  for (const n of set.all) {
    if (n.name === config.namespace) {
      if (n.shards !== config.shards) throw new Error(`namespace ${n.name} is this process's S4_NAMESPACE, created with S4_SHARDS=${config.shards} shards; its policy says ${n.shards}`);
      continue;
    }
    const key = namespaceManifestKey(n.name);
    const got = await objects.get(key);
    if (got && !got.notModified) {
      const stored = JSON.parse(Buffer.from(got.body).toString('utf8')) as { shards: number };
      if (stored.shards !== n.shards) throw new Error(`namespace ${n.name} was created with ${stored.shards} shards; its policy says ${n.shards} (changing a namespace's shard count is not supported)`);
      continue;
    }
    try {
      await objects.put(key, Buffer.from(JSON.stringify({ format: 1, shards: n.shards, createdAt: new Date().toISOString() })), { ifNoneMatch: '*' });
    } catch (e) {
      if (!(e instanceof PreconditionFailedError)) throw e;
    }
  }
}
