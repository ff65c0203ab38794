import { NamespaceSet } from '@s4/core';
import { describe, expect, it } from 'vitest';
import { NamespacesFileError, parseDuration, parseNamespaces, refusedChanges, singleNamespace, type PolicyDefaults } from './namespaces.js';

const d: PolicyDefaults = { defaultNamespace: 'default', shards: 16, hotMs: 300_000, maxFields: 256, maxRecordBytes: 65_536 };

const problems = (file: string, text: string): string[] => {
  try {
    parseNamespaces(file, text, d);
  } catch (e) {
    if (e instanceof NamespacesFileError) return e.problems;
    throw e;
  }
  return [];
};

describe('namespace policy file', () => {
  it('parses JSON and YAML to the same policies, filling what an entry leaves out from the process settings', () => {
    const json = parseNamespaces('n.json', JSON.stringify({ namespaces: [{ name: 'infra', prefixes: ['cpu.'], rawRetention: '30d', rollups: [{ resolution: '1h', retention: '2y' }], backfill: '1d', hot: '10m', limits: { maxActiveSeries: 1000 } }] }), d);
    const yaml = parseNamespaces('n.yaml', 'namespaces:\n  - name: infra\n    prefixes: ["cpu."]\n    rawRetention: 30d\n    rollups: [{ resolution: 1h, retention: 2y }]\n    backfill: 1d\n    hot: 10m\n    limits: { maxActiveSeries: 1000 }\n', d);
    expect(yaml).toEqual(json);
    expect(json.defaultNamespace).toBe('default');
    expect(json.namespaces.map((n) => n.name)).toEqual(['infra', 'default']);
    const infra = json.namespaces[0]!;
    expect(infra).toMatchObject({ shards: 16, rawRetentionMs: 30 * 86_400_000, backfillMs: 86_400_000, hotMs: 600_000, rollups: [{ resolution: '1h', retentionMs: 2 * 365 * 86_400_000 }] });
    expect(infra.limits).toEqual({ maxActiveSeries: 1000, maxNewSeriesPerMinute: undefined, maxFields: 256, maxRecordBytes: 65_536, maxSamplesPerSecond: undefined });
    expect(json.namespaces[1]).toEqual(singleNamespace(d).namespaces[0]);
  });

  it('names every problem of a bad file', () => {
    expect(problems('n.json', '{')[0]).toMatch(/^cannot be parsed/);
    expect(problems('n.json', JSON.stringify({ namespaces: [{ name: 'A' }] }))).toEqual(['namespaces.0.name: lowercase letters, digits, _ and -, at most 63']);
    expect(problems('n.json', JSON.stringify({ namespaces: [{ name: 'a', rawRetention: 'a month' }] }))).toEqual(['namespaces.0.rawRetention: "a month" is not a retention: write forever, or a duration such as 30d, 12h, 2y']);
    expect(problems('n.json', JSON.stringify({ namespaces: [{ name: 'a', prefixes: ['x'] }, { name: 'a', prefixes: ['x'] }] }))).toEqual([
      'namespaces.1.name: namespace a is listed twice',
      `namespaces.1.prefixes: prefix "x" is also a's; a prefix belongs to one namespace`,
    ]);
    expect(problems('n.json', JSON.stringify({ namespaces: [{ name: 'a', rawRetention: '1d', backfill: '2d', limits: { maxFields: 300 } }] }))).toEqual([
      'namespaces.0.limits.maxFields: 300 is above S4_MAX_FIELDS_PER_SAMPLE=256',
      'namespaces.0.backfill: must not be longer than rawRetention (a write older than the retention would be deleted at once)',
    ]);
    expect(problems('n.json', JSON.stringify({ defaultNamespace: 'z', namespaces: [{ name: 'a' }] }))).toEqual(['defaultNamespace: z is not among the namespaces']);
    expect(problems('n.json', JSON.stringify({ namespaces: [{ name: 'a', unknown: 1 }] }))[0]).toContain('unknown');
  });

  it('refuses a running process changing a shard count or losing a namespace', () => {
    const a = parseNamespaces('n.json', JSON.stringify({ namespaces: [{ name: 'a', shards: 4 }, { name: 'b' }] }), d);
    const b = parseNamespaces('n.json', JSON.stringify({ namespaces: [{ name: 'a', shards: 8, prefixes: ['x'] }] }), d);
    expect(refusedChanges(a, b)).toEqual([
      'namespace a: shards 4 -> 8 refused; the shard count of a namespace is fixed (no migration exists yet)',
      'namespace b was removed: its data would become unreachable (keep it, with no prefixes, to stop routing new metrics there)',
    ]);
    expect(refusedChanges(a, parseNamespaces('n.json', JSON.stringify({ namespaces: [{ name: 'a', shards: 4, rawRetention: '1d' }, { name: 'b' }, { name: 'c' }] }), d))).toEqual([]);
  });

  it('routes a metric to its longest matching prefix, the rest to the default namespace', () => {
    const set = new NamespaceSet(parseNamespaces('n.json', JSON.stringify({ namespaces: [{ name: 'a', prefixes: ['cpu.'] }, { name: 'b', prefixes: ['cpu.load.'] }, { name: 'c', prefixes: ['cpu.l'] }] }), d));
    expect(['cpu.user', 'cpu.load.1', 'cpu.loa', 'cpu.lo', 'mem', 'cpu'].map((m) => set.resolve(m).name)).toEqual(['a', 'b', 'c', 'c', 'default', 'default']);
  });

  it('reads durations', () => {
    expect(['500ms', '30s', '5m', '12h', '90d', '2y', '1w', '5', '-1d'].map(parseDuration)).toEqual([500, 30_000, 300_000, 43_200_000, 90 * 86_400_000, 730 * 86_400_000, null, null, null]);
  });
});
