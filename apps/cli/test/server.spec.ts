// The CLI against the real S4 server in embedded mode: import/export round trips and verify.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { removeDir, startEmbedded, type Embedded } from '../../sdk/test/embedded.js';
import { runCli } from './run.js';

const HOUR = 3_600_000;
// Recent enough for any backfill window, old enough not to be "in the future".
const base = Math.floor(Date.now() / HOUR) * HOUR - 5 * HOUR;
const range = ['--from', String(base - HOUR), '--to', String(base + 6 * HOUR)];
const dir = mkdtempSync(join(tmpdir(), 's4-cli-it-'));

/** Samples of two metrics, several series, sparse fields, every kind of value. */
function ndjsonFixture(): string {
  const lines: string[] = [];
  for (const metric of ['rt.env', 'rt.power']) {
    for (const room of ['a', 'b c', 'd,e']) {
      for (let i = 0; i < 300; i++) {
        const ts = base + i * 37_000 + (room.length - 1) * 11;
        const fields: Record<string, unknown> = { value: i % 7 === 0 ? i : i / 8 };
        if (i % 3 === 0) fields.label = `say "hi", ${i}\nline two`;
        if (i % 5 === 0) fields.ok = i % 2 === 0;
        if (i % 11 === 0) fields.nested = { arr: [1, 'x', null, { z: i }], n: -0.5 };
        lines.push(JSON.stringify({ metric, tags: { room, site: 'hq' }, ts, fields }));
      }
    }
  }
  return `${lines.join('\n')}\n`;
}

/** One metric, CSV-safe values (no strings that look like numbers or booleans). */
function csvFixtureSamples(): string {
  const lines: string[] = [];
  for (const dev of ['x', 'y']) {
    for (let i = 0; i < 200; i++) {
      const fields: Record<string, unknown> = { temp: 20 + i / 16 };
      if (i % 4 === 0) fields.note = `n=${i}; "q", ok`;
      if (i % 6 === 0) fields.flag = i % 12 === 0;
      if (i % 9 === 0) fields.cfg = { k: [i, 'v'] };
      lines.push(JSON.stringify({ metric: 'rt.csv', tags: { dev }, ts: base + i * 60_000, fields }));
    }
  }
  return `${lines.join('\n')}\n`;
}

describe('s4 against an embedded server', { timeout: 120_000 }, () => {
  let one: Embedded;
  let two: Embedded;
  const cli = (server: Embedded, ...args: string[]) => runCli([...args, '--url', server.url]);

  beforeAll(async () => {
    [one, two] = await Promise.all([startEmbedded(), startEmbedded()]);
  }, 120_000);
  afterAll(async () => {
    for (const s of [one, two]) {
      await s?.close();
      if (s !== undefined) removeDir(s.dataDir);
    }
    removeDir(dir);
  }, 60_000);

  /** Imports a file into a fresh server and exports it again in `format`. */
  async function roundTrip(file: string, format: string, metric?: string): Promise<Buffer> {
    const server = await startEmbedded();
    try {
      const imported = await cli(server, 'import', file, '--quiet');
      expect(imported.stderr).toBe('');
      expect(imported.code).toBe(0);
      const exported = await cli(server, 'export', '--format', format, ...(metric === undefined ? [] : ['--metric', metric]), ...range);
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
      return exported.stdout;
    } finally {
      await server.close();
      removeDir(server.dataDir);
    }
  }

  function parsedLines(text: string): unknown[] {
    return text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as unknown)
      .sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1));
  }

  it('NDJSON: import then export round-trips byte for byte', async () => {
    const original = join(dir, 'in.ndjson');
    writeFileSync(original, ndjsonFixture());
    const exported = await roundTrip(original, 'ndjson');
    // Same samples as the input, then the export is a fixed point of import+export, byte for byte.
    expect(parsedLines(exported.toString('utf8'))).toEqual(parsedLines(readFileSync(original, 'utf8')));
    const canonical = join(dir, 'canonical.ndjson');
    writeFileSync(canonical, exported);
    expect((await roundTrip(canonical, 'ndjson')).equals(exported)).toBe(true);
  });

  it('Parquet: exports every sample, nested fields as JSON, readable by another Parquet reader', async () => {
    const original = join(dir, 'in-pq.ndjson');
    writeFileSync(original, ndjsonFixture());
    const server = await startEmbedded();
    const file = join(dir, 'out.parquet');
    try {
      expect((await cli(server, 'import', original, '--quiet')).code).toBe(0);
      // Half of it into segments, so that rows come from both the columnar and the merging answer.
      await fetch(`${server.url}/v1/admin/flush`, { method: 'POST' });
      const exported = await cli(server, 'export', '-o', file, ...range);
      expect(exported.stderr).toBe('');
      expect(exported.code).toBe(0);
    } finally {
      await server.close();
      removeDir(server.dataDir);
    }
    const { asyncBufferFromFile, parquetReadObjects } = await import('hyparquet');
    const rows = (await parquetReadObjects({ file: await asyncBufferFromFile(file) })) as { metric: string; tags: unknown; ts: unknown; fields: unknown }[];
    const json = (v: unknown) => (typeof v === 'string' ? (JSON.parse(v) as unknown) : v);
    const ms = (v: unknown) => (v instanceof Date ? v.getTime() : Number(v));
    const got = rows.map((r) => JSON.stringify({ metric: r.metric, tags: json(r.tags), ts: ms(r.ts), fields: json(r.fields) }));
    expect(got.map((l) => JSON.parse(l) as unknown).sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1))).toEqual(parsedLines(readFileSync(original, 'utf8')));
  });

  it('CSV: import then export round-trips byte for byte', async () => {
    const source = join(dir, 'csv-source.ndjson');
    writeFileSync(source, csvFixtureSamples());
    const csv = await roundTrip(source, 'csv', 'rt.csv');
    expect(csv.toString('utf8').split('\n')[0]).toMatch(/^metric,tags,ts,/);
    const file = join(dir, 'in.csv');
    writeFileSync(file, csv);
    expect((await roundTrip(file, 'csv', 'rt.csv')).equals(csv)).toBe(true);
    // and the CSV carries the same samples as the NDJSON it came from
    const back = await roundTrip(file, 'ndjson');
    expect(parsedLines(back.toString('utf8'))).toEqual(parsedLines(csvFixtureSamples()));
  });

  it('MessagePack: import then export round-trips byte for byte', async () => {
    const source = join(dir, 'mp-source.ndjson');
    writeFileSync(source, ndjsonFixture());
    const packed = await roundTrip(source, 'msgpack');
    const file = join(dir, 'in.msgpack');
    writeFileSync(file, packed);
    expect((await roundTrip(file, 'msgpack')).equals(packed)).toBe(true);
  });

  it('imports gzip and Influx line protocol', async () => {
    const { gzipSync } = await import('node:zlib');
    const lp = ['cpu,host=a usage=0.5,cores=8i', 'cpu,host=b usage=0.25,cores=4i'].map((l, i) => `${l} ${BigInt(base + i) * 1_000_000n}`).join('\n');
    const file = join(dir, 'cpu.data');
    writeFileSync(file, gzipSync(lp));
    const server = await startEmbedded();
    const imported = await cli(server, 'import', file, '--quiet');
    const out = await cli(server, 'export', '--metric', 'cpu', ...range);
    await server.close();
    removeDir(server.dataDir);
    expect(imported.code).toBe(0);
    expect(parsedLines(out.stdout.toString('utf8'))).toEqual([
      { metric: 'cpu', tags: { host: 'a' }, ts: base, fields: { cores: 8, usage: 0.5 } },
      { metric: 'cpu', tags: { host: 'b' }, ts: base + 1, fields: { cores: 4, usage: 0.25 } },
    ].sort((a, b) => (JSON.stringify(a) < JSON.stringify(b) ? -1 : 1)));
  });

  it('verify passes on identical data and reports an injected difference', async () => {
    const file = join(dir, 'verify.ndjson');
    writeFileSync(file, ndjsonFixture());
    for (const s of [one, two]) expect((await cli(s, 'import', file, '--quiet')).code).toBe(0);

    const same = await runCli(['verify', one.url, two.url, ...range]);
    expect(same.stderr).toMatch(/^identical: \d+ windows compared, 1800 samples in a, 1800 in b/);
    expect(same.code).toBe(0);
    expect((await runCli(['verify', one.url, file, ...range])).code).toBe(0);

    // one changed value in a file
    const lines = readFileSync(file, 'utf8').split('\n');
    const changed = JSON.parse(lines[10] as string) as { ts: number; fields: { value: number } };
    changed.fields.value += 1;
    lines[10] = JSON.stringify(changed);
    const edited = join(dir, 'edited.ndjson');
    writeFileSync(edited, lines.join('\n'));
    const diff = await runCli(['verify', one.url, edited, ...range]);
    expect(diff.code).toBe(1);
    const hour = new Date(Math.floor(changed.ts / HOUR) * HOUR).toISOString();
    const report = diff.stdout.toString('utf8');
    expect(report.startsWith(`rt.env{room=a,site=hq}  ${hour}  a: `)).toBe(true);
    // same count and time span, different checksum
    const [a, b] = report.trim().split(/ {2}[ab]: /).slice(1).map((x) => x.split(' #')) as [[string, string], [string, string]];
    expect(a[0]).toBe(b[0]);
    expect(a[1]).not.toBe(b[1]);
    expect(diff.stdout.toString('utf8').split('\n').filter(Boolean)).toHaveLength(1);
    expect(diff.stderr).toMatch(/^1 of \d+ windows differ/);

    // one extra sample on a server
    await runCli(['import', '-', '--url', two.url, '--quiet'], { stdin: `${JSON.stringify({ metric: 'rt.power', tags: { room: 'zz' }, ts: base + 5, fields: { value: 1 } })}\n` });
    const extra = await runCli(['verify', one.url, two.url, ...range]);
    expect(extra.code).toBe(1);
    expect(extra.stdout.toString('utf8')).toMatch(/^rt\.power\{room=zz\} {2}\S+ {2}a: missing {2}b: 1 samples/);
  });

  it('query prints a table, series lists, flush reports', async () => {
    const q = await cli(one, 'query', '--metric', 'rt.env', '--tag', 'room:a', '--from', String(base), '--to', String(base + 2 * 37_000), '--fields', 'value,label');
    expect(q.code).toBe(0);
    const text = q.stdout.toString('utf8');
    expect(text).toContain('rt.env{room=a,site=hq}  (2 samples)');
    expect(text).toContain(new Date(base).toISOString());
    const tty = await runCli(['query', '--metric', 'rt.env', '--tag', 'room:a', '--from', String(base), '--to', String(base + HOUR), '--fields', 'value', '--url', one.url], { tty: true });
    expect(tty.stdout.toString('utf8')).toMatch(/value [▁▂▃▄▅▆▇█]+ {2}min/);
    const series = await cli(one, 'series', '--metric', 'rt.env', ...range);
    expect(series.stdout.toString('utf8')).toBe('rt.env{room=a,site=hq}\nrt.env{room=b c,site=hq}\nrt.env{room=d,e,site=hq}\n');
    const flushed = await cli(one, 'flush');
    expect(flushed.code).toBe(0);
    expect(flushed.stdout.toString('utf8')).toMatch(/^flushed \d+ samples of \d+ series into \d+ objects/);
    expect((await runCli(['verify', one.url, join(dir, 'verify.ndjson'), '--metric', 'rt.env', ...range])).code).toBe(0);
  });
});
