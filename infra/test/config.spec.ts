import { describe, expect, it } from 'vitest';
import { ENVIRONMENTS, ENVIRONMENT_NAMES, isFargateSize, loadSettings, parseSettings, SettingsError } from '../lib/config.js';

describe('environment settings', () => {
  it.each(ENVIRONMENT_NAMES)('%s is valid', (env) => {
    expect(loadSettings(env).name).toBe(env);
  });

  it('needs -c env and refuses unknown environments', () => {
    expect(() => loadSettings(undefined)).toThrow(/-c env=<dev\|staging\|prod>/);
    expect(() => loadSettings('qa')).toThrow(SettingsError);
  });

  it('names every bad field', () => {
    const bad = {
      ...ENVIRONMENTS.staging,
      namespaces: [
        { name: 'Bad Name', rawRetentionDays: 0, rollupRetentionDays: 10 },
        { name: 'default', rawRetentionDays: 10, rollupRetentionDays: 10 },
      ],
      workers: { ...ENVIRONMENTS.staging.workers, roles: ['ingest'] },
      extraEnv: { S4_ROLE: 'api' },
    };
    let message = '';
    try {
      parseSettings('staging', bad);
    } catch (e) {
      message = (e as Error).message;
    }
    expect(message).toMatch(/namespaces\.0\.name/);
    expect(message).toMatch(/namespaces\.0\.rawRetentionDays/);
  });

  it('refuses ingest without Kafka, duplicate namespaces, an unknown default namespace and managed variables', () => {
    const base = ENVIRONMENTS.staging;
    expect(() => parseSettings('staging', { ...base, workers: { ...base.workers, roles: ['ingest'] } })).toThrow(/workers\.roles: the ingest role needs kafka\.enabled/);
    expect(() => parseSettings('staging', { ...base, namespaces: [...base.namespaces, base.namespaces[0]] })).toThrow(/listed twice/);
    expect(() => parseSettings('staging', { ...base, defaultNamespace: 'nope' })).toThrow(/defaultNamespace/);
    expect(() => parseSettings('staging', { ...base, extraEnv: { S4_REDIS_URL: 'redis://x' } })).toThrow(/set by the stack itself/);
    expect(() => parseSettings('staging', { ...base, api: { ...base.api, internetFacing: true } })).toThrow(/needs HTTPS/);
    expect(() => parseSettings('prod', { ...ENVIRONMENTS.prod, hotTier: { engine: 'memorydb', nodeType: 'db.r7g.large', replicasPerShard: 0 } })).toThrow(/multi-AZ/);
  });

  it('worker roles default to segment + aggregate, plus ingest with Kafka', () => {
    expect(parseSettings('staging', ENVIRONMENTS.staging).workers.roles).toEqual(['segment', 'aggregate']);
    expect(parseSettings('staging', { ...ENVIRONMENTS.staging, kafka: { enabled: true } }).workers.roles).toEqual(['segment', 'aggregate', 'ingest']);
  });

  it('knows the Fargate task sizes', () => {
    expect(isFargateSize(256, 512)).toBe(true);
    expect(isFargateSize(256, 4096)).toBe(false);
    expect(isFargateSize(1024, 3072)).toBe(true);
    expect(isFargateSize(1024, 1024)).toBe(false);
    expect(isFargateSize(300, 1024)).toBe(false);
  });
});
