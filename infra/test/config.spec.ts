import { PLANNED_ROLES, ROLES } from '@s4/core';
import { describe, expect, it } from 'vitest';
import {
  DEPLOYABLE_WORKER_ROLES,
  ENVIRONMENTS,
  ENVIRONMENT_NAMES,
  isFargateSize,
  loadSettings,
  parseSettings,
  SettingsError,
  WORKER_ROLES,
} from '../lib/config.js';

/** Planned roles the app does not implement yet (a role moved to ROLES drops out of this list). */
const NOT_BUILT = PLANNED_ROLES.filter((r) => !(ROLES as readonly string[]).includes(r));

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
    // With Kafka the API produces to it: a split deployment without ingest would never store those writes.
    expect(() => parseSettings('staging', { ...base, kafka: { enabled: true }, workers: { ...base.workers, roles: ['segment'] } })).toThrow(/the ingest role must run/);
    expect(parseSettings('staging', { ...base, kafka: { enabled: true }, workers: { ...base.workers, roles: ['segment', 'ingest'] } }).workers.roles).toEqual(['segment', 'ingest']);
    expect(() => parseSettings('staging', { ...base, namespaces: [...base.namespaces!, base.namespaces![0]!] })).toThrow(/listed twice/);
    expect(() => parseSettings('staging', { ...base, defaultNamespace: 'nope' })).toThrow(/defaultNamespace/);
    expect(() => parseSettings('staging', { ...base, extraEnv: { S4_REDIS_URL: 'redis://x' } })).toThrow(/set by the stack itself/);
    expect(() => parseSettings('staging', { ...base, api: { ...base.api, internetFacing: true } })).toThrow(/needs HTTPS/);
    expect(() => parseSettings('prod', { ...ENVIRONMENTS.prod, hotTier: { engine: 'memorydb', nodeType: 'db.r7g.large', replicasPerShard: 0 } })).toThrow(/multi-AZ/);
  });

  it('worker roles default to every deployable one, ingest only with Kafka; none with api.role all', () => {
    const split = parseSettings('staging', ENVIRONMENTS.staging).workers.roles;
    expect(split).toEqual(expect.arrayContaining(['segment', 'aggregate', 'compact']));
    expect(split).not.toContain('ingest');
    expect(split).toEqual(DEPLOYABLE_WORKER_ROLES.filter((r) => r !== 'ingest'));
    expect(parseSettings('staging', { ...ENVIRONMENTS.staging, kafka: { enabled: true } }).workers.roles).toEqual([...DEPLOYABLE_WORKER_ROLES]);
    expect(parseSettings('dev', ENVIRONMENTS.dev).workers.roles).toEqual([]);
    expect(parseSettings('dev', { ...ENVIRONMENTS.dev, kafka: { enabled: true } }).workers.roles).toEqual([]);
  });

  it('worker roles come from @s4/core: every one is an app role or a planned one, every app worker role is deployable', () => {
    const known = new Set<string>([...ROLES, ...PLANNED_ROLES]);
    for (const r of WORKER_ROLES) expect(known.has(r), r).toBe(true);
    expect(WORKER_ROLES).not.toContain('all');
    expect(WORKER_ROLES).not.toContain('api');
    const appWorkers = ROLES.filter((r) => r !== 'all' && r !== 'api');
    expect([...DEPLOYABLE_WORKER_ROLES].sort()).toEqual([...appWorkers].sort());
    const everyWorker = { ...ENVIRONMENTS.staging, kafka: { enabled: true }, workers: { ...ENVIRONMENTS.staging.workers, roles: [...appWorkers] } };
    expect(parseSettings('staging', everyWorker).workers.roles).toEqual(appWorkers);
  });

  it('accepts planned roles in the schema but refuses them, naming why', () => {
    const base = ENVIRONMENTS.staging;
    for (const role of NOT_BUILT) {
      const input = { ...base, kafka: { enabled: true }, workers: { ...base.workers, roles: ['segment', role] } };
      expect(() => parseSettings('staging', input)).toThrow(
        `workers.roles: the ${role} role is planned, not built yet: the app refuses S4_ROLE=${role}`,
      );
    }
    expect(() => parseSettings('staging', { ...base, workers: { ...base.workers, roles: ['nope'] } })).toThrow(/workers\.roles\.0/);
  });

  it('knows the Fargate task sizes', () => {
    expect(isFargateSize(256, 512)).toBe(true);
    expect(isFargateSize(256, 4096)).toBe(false);
    expect(isFargateSize(1024, 3072)).toBe(true);
    expect(isFargateSize(1024, 1024)).toBe(false);
    expect(isFargateSize(300, 1024)).toBe(false);
  });
});

describe('namespacesFile: lifecycle rules from the engine policy file', () => {
  it('derives names and S3 expiry days from the same file the containers run with, and refuses a bad file naming the problem', async () => {
    const { mkdtempSync, writeFileSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 's4-infra-ns-'));
    const file = join(dir, 'namespaces.yaml');
    writeFileSync(file, 'namespaces:\n  - name: infra\n    prefixes: [cpu.]\n    rawRetention: 30d\n    rollups: [{ resolution: 1h, retention: 400d }]\n  - name: default\n');
    const { namespaces: _legacy, ...base } = ENVIRONMENTS.staging;
    const s = parseSettings('staging', { ...base, namespacesFile: file });
    expect(s.namespaceNames).toEqual(['infra', 'default']);
    // retention + 1 day + the default 10 min delete grace, in whole days; forever: no rule.
    expect(s.lifecycle).toEqual([{ name: 'infra', segDays: 32, catDays: 32, rollupDays: 402 }, { name: 'default' }]);
    writeFileSync(file, 'namespaces:\n  - name: infra\n    rawRetention: soon\n');
    expect(() => parseSettings('staging', { ...base, namespacesFile: file })).toThrow(/namespacesFile: .*rawRetention: "soon" is not a retention/);
    expect(() => parseSettings('staging', { ...ENVIRONMENTS.staging, namespacesFile: file })).toThrow(/give namespaces or namespacesFile/);
  });
});
