import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, redactConfig } from './config.js';

describe('loadConfig', () => {
  it('defaults to the embedded store', () => {
    const c = loadConfig({});
    expect(c.port).toBe(8080);
    expect(c.hot).toEqual({ kind: 'embedded', dir: './data/hot', fsync: 'always' });
    expect(c.objects).toEqual({ kind: 'filesystem', dir: './data/objects' });
    expect(c.role).toBe('all');
  });

  it('switches to Redis and S3 when configured', () => {
    const c = loadConfig({ S4_REDIS_URL: 'redis://127.0.0.1:6390', S4_S3_BUCKET: 'my-bucket', S4_S3_FORCE_PATH_STYLE: 'true' });
    expect(c.hot.kind).toBe('redis');
    expect(c.objects).toMatchObject({ kind: 's3', bucket: 'my-bucket', forcePathStyle: true });
  });

  it('bounds every call to Redis and S3 by default and takes other budgets', () => {
    const env = { S4_REDIS_URL: 'redis://127.0.0.1:6390', S4_S3_BUCKET: 'my-bucket' };
    const c = loadConfig(env);
    expect(c.hot).toMatchObject({ kind: 'redis', timeoutMs: 5_000 });
    expect(c.objects).toMatchObject({ kind: 's3', timeoutMs: 10_000, hedgeAfterMs: 1_000 });
    const tuned = loadConfig({ ...env, S4_REDIS_TIMEOUT_MS: '250', S4_S3_TIMEOUT_MS: '2000', S4_S3_HEDGE_AFTER_MS: '0' });
    expect(tuned.hot).toMatchObject({ timeoutMs: 250 });
    expect(tuned.objects).toMatchObject({ timeoutMs: 2_000, hedgeAfterMs: 0 });
    for (const [name, value] of [['S4_S3_TIMEOUT_MS', '0'], ['S4_REDIS_TIMEOUT_MS', 'soon'], ['S4_S3_HEDGE_AFTER_MS', '-1']] as const)
      expect(() => loadConfig({ ...env, [name]: value })).toThrow(name);
  });

  it('flushes a backlog sooner above S4_FLUSH_BACKLOG_BYTES, 0 turning it off, and refuses a bad value by name', () => {
    expect(loadConfig({}).flush.backlogBytes).toBe(32 * 1024 * 1024);
    expect(loadConfig({ S4_FLUSH_BACKLOG_BYTES: '0' }).flush.backlogBytes).toBe(0);
    for (const bad of ['-1', 'lots', '1.5']) expect(() => loadConfig({ S4_FLUSH_BACKLOG_BYTES: bad })).toThrow('S4_FLUSH_BACKLOG_BYTES');
  });

  it('lets late data wait S4_FLUSH_LATE_MS between flushes of a closed window when set (0, the default, flushes it every pass), and refuses a bad value by name', () => {
    expect(loadConfig({}).flush.lateMs).toBe(0);
    expect(loadConfig({ S4_FLUSH_LATE_MS: '60000' }).flush.lateMs).toBe(60_000);
    for (const bad of ['-1', 'soon', '1.5', '86400001']) expect(() => loadConfig({ S4_FLUSH_LATE_MS: bad })).toThrow('S4_FLUSH_LATE_MS');
  });

  it('sizes the write path series caches by S4_SERIES_CACHE_ENTRIES, and refuses a bad value by name', () => {
    expect(loadConfig({}).seriesCacheEntries).toBe(65_536);
    expect(loadConfig({ S4_SERIES_CACHE_ENTRIES: '1048576' }).seriesCacheEntries).toBe(1_048_576);
    for (const bad of ['0', '1023', '16777217', 'many', '1.5']) expect(() => loadConfig({ S4_SERIES_CACHE_ENTRIES: bad })).toThrow('S4_SERIES_CACHE_ENTRIES');
  });

  it('tunes the runtime unless S4_RUNTIME_TUNING is false, and refuses a bad value by name', () => {
    expect(loadConfig({}).runtimeTuning).toBe(true);
    expect(loadConfig({ S4_RUNTIME_TUNING: 'false' }).runtimeTuning).toBe(false);
    expect(() => loadConfig({ S4_RUNTIME_TUNING: 'maybe' })).toThrow('S4_RUNTIME_TUNING');
  });

  it('names every bad variable', () => {
    try {
      loadConfig({ S4_PORT: 'eighty', S4_ROLE: 'boss', S4_TYPO: '1' });
      expect.unreachable();
    } catch (e) {
      expect(e).toBeInstanceOf(ConfigError);
      const msg = (e as Error).message;
      expect(msg).toContain('S4_PORT');
      expect(msg).toContain('S4_ROLE');
      expect(msg).toContain('S4_TYPO: unknown variable');
    }
  });

  it('keeps the orphan sweep from deleting parts a fold replaced before the compactor lets go of them', () => {
    expect(loadConfig({}).compact.deleteGraceMs).toBeLessThanOrEqual(loadConfig({}).flush.orphanGraceMs);
    expect(() => loadConfig({ S4_ORPHAN_GRACE_MS: '60000', S4_COMPACT_DELETE_GRACE_MS: '120000' })).toThrow(/S4_ORPHAN_GRACE_MS=60000: must be at least S4_COMPACT_DELETE_GRACE_MS=120000/);
  });

  it('ingests directly by default; Kafka ingest needs brokers, and the ingest role needs Kafka ingest', () => {
    const c = loadConfig({});
    expect(c.ingest.mode).toBe('direct');
    expect(c.kafka).toBeUndefined();
    const k = loadConfig({ S4_INGEST: 'kafka', S4_KAFKA_BROKERS: ' b1:9092, b2:9092 ', S4_ROLE: 'ingest', S4_KAFKA_AUTH: 'aws-iam', S4_KAFKA_TLS: 'true', S4_KAFKA_REPLICATION: '0' });
    expect(k.ingest).toMatchObject({ mode: 'kafka', readyLag: 1000, sessionTimeoutMs: 10_000 });
    expect(k.kafka).toMatchObject({ brokers: ['b1:9092', 'b2:9092'], topicPrefix: 's4', tls: true, auth: 'aws-iam', replication: 0, timeoutMs: 10_000 });
    expect(() => loadConfig({ S4_INGEST: 'kafka' })).toThrow(/S4_INGEST="kafka": needs S4_KAFKA_BROKERS/);
    expect(() => loadConfig({ S4_ROLE: 'ingest' })).toThrow(/S4_ROLE="ingest": the ingest role consumes Kafka/);
    expect(() => loadConfig({ S4_KAFKA_BROKERS: 'nohost' })).toThrow(/S4_KAFKA_BROKERS.*host:port/);
    expect(() => loadConfig({ S4_KAFKA_TOPIC_PREFIX: 'a.b' })).toThrow(/S4_KAFKA_TOPIC_PREFIX/);
  });

  it('redacts secrets', () => {
    const c = loadConfig({ S4_REDIS_URL: 'redis://user:pw@h:1', S4_REDIS_PASSWORD: 'secret' });
    const text = JSON.stringify(redactConfig(c));
    expect(text).not.toContain('secret');
    expect(text).not.toContain(':pw@');
  });
});
