import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FakeS4 } from '../../sdk/test/fake-server.js';
import { runCli } from './run.js';

const bin = fileURLToPath(new URL('../bin/s4.js', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 's4-cli-'));

describe('the s4 launcher', () => {
  it('runs from the TypeScript sources when nothing is built (fresh clone after npm ci)', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [bin, '--help'], { env: { ...process.env, S4_CLI_FROM_SOURCE: '1' } });
    expect(stdout).toMatch(/^s4 \d+\.\d+\.\d+: /);
    expect(stdout).toContain('verify <a> <b>');
  });

  it('exits 2 with one line on stderr for a usage error', async () => {
    const error = (await promisify(execFile)(process.execPath, [bin, 'query', '--nope'], { env: { ...process.env, S4_CLI_FROM_SOURCE: '1' } }).catch((e: unknown) => e)) as { code: number; stderr: string };
    expect(error.code).toBe(2);
    expect(error.stderr.trim().split('\n')).toHaveLength(1);
    expect(error.stderr).toContain("Unknown option '--nope'");
  });
});

describe('exit codes and messages', () => {
  it('0 for help, 2 for usage errors, 1 for failures; always one line', async () => {
    expect((await runCli(['--help'])).code).toBe(0);
    expect((await runCli(['import', '--help'])).stdout.toString()).toContain('Usage: s4 import');
    expect(await runCli([])).toMatchObject({ code: 2 });
    const unknown = await runCli(['frobnicate']);
    expect(unknown).toMatchObject({ code: 2, stderr: 's4: unknown command "frobnicate"; run s4 --help\n' });
    expect(await runCli(['export', '--format', 'xml'])).toMatchObject({ code: 2, stderr: 's4 export: --format must be one of ndjson, csv, msgpack, parquet (see s4 export --help)\n' });
    expect((await runCli(['query', '--metric', 'm', '--from', 'soon'])).code).toBe(2);
    expect((await runCli(['import', join(dir, 'missing.csv')])).stderr).toMatch(/^s4 import: cannot read .*missing\.csv: no such file/);
    const down = await runCli(['series', '--url', 'http://127.0.0.1:9']);
    expect(down.code).toBe(1);
    expect(down.stderr).toMatch(/^s4 series: GET http:\/\/127\.0\.0\.1:9\/v1\/series failed: .*\n$/);
  });

  it('reports the line of bad input and how many samples were stored', async () => {
    const server = await new FakeS4().start();
    try {
      const file = join(dir, 'bad.ndjson');
      writeFileSync(file, '{"metric":"m","ts":1,"fields":{"v":1}}\n{"metric":"m","ts":2,"fields":{"v":2}}\nnot json\n');
      const r = await runCli(['import', file, '--url', server.url, '--quiet']);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^s4 import: .*bad\.ndjson:3: invalid JSON.* — 2 samples stored; fix the cause and re-run \(writes are idempotent\)\n$/);
      expect(server.store.size).toBe(2);
    } finally {
      await server.stop();
    }
  });
});

describe('s4 verify on files', () => {
  const a = join(dir, 'a.ndjson');
  const b = join(dir, 'b.csv');
  beforeAll(() => {
    const samples = Array.from({ length: 100 }, (_, i) => ({ metric: 'v', tags: { k: i % 2 ? 'x' : 'y' }, ts: 7_200_000 + i * 60_000, fields: { n: i, s: `s${i}` } }));
    writeFileSync(a, samples.map((s) => JSON.stringify(s)).join('\n'));
    // the same samples as CSV, in another order, with one sample written twice (the last write wins)
    const rows = samples.reverse().map((s) => `v,k=${s.tags.k},${s.ts},${s.fields.n},${s.fields.s}`);
    writeFileSync(b, ['metric,tags,ts,n,s', 'v,k=y,7200000,999,old', ...rows].join('\n'));
  });
  afterAll(() => undefined);

  it('passes on the same samples whatever the format and order', async () => {
    const r = await runCli(['verify', a, b]);
    expect(r.stderr).toBe('identical: 4 windows compared, 100 samples in a, 100 in b\n');
    expect(r.code).toBe(0);
  });

  it('prints the differing window and exits 1', async () => {
    writeFileSync(join(dir, 'c.csv'), 'metric,tags,ts,n,s\nv,k=y,7200000,0,s0\n');
    const r = await runCli(['verify', a, join(dir, 'c.csv'), '--tag', 'k:y', '--window', '1h']);
    expect(r.code).toBe(1);
    expect(r.stdout.toString()).toMatch(/^v\{k=y\} {2}1970-01-01T02:00:00.000Z {2}a: 30 samples 02:00:00.000..02:58:00.000 #[0-9a-f]{16} {2}b: 1 samples 02:00:00.000..02:00:00.000 #[0-9a-f]{16}\nv\{k=y\} {2}1970-01-01T03:00:00.000Z {2}a: 20 samples .* b: missing\n$/);
    expect(r.stderr).toBe('2 of 2 windows differ: 2 windows compared, 50 samples in a, 1 in b\n');
  });
});

describe('import through the batching writer', () => {
  let server: FakeS4;
  beforeAll(async () => {
    server = await new FakeS4().start();
  });
  afterAll(async () => {
    await server.stop();
  });

  it('sends batches of --batch samples and rides out 503s', async () => {
    let calls = 0;
    server.writeHook = () => (++calls === 2 ? { status: 503, body: { error: { code: 'not_ready', message: 'starting' } } } : undefined);
    const lines = Array.from({ length: 2500 }, (_, i) => `m,dev=d${i % 5} v=${i} ${(1_700_000_000_000 + i) * 1_000_000}`);
    const r = await runCli(['import', '-', '--format', 'line', '--batch', '1000', '--url', server.url], { stdin: lines.join('\n') });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^imported 2,500 rows {2}\d+(\.\d)? KiB {2}[\d,]+ rows\/s/);
    expect(server.store.size).toBe(2500);
    // three batches (1000, 1000, 500), one of them sent twice (the 503)
    const sizes = server.requests.filter((q) => q.path === '/v1/write').map((q) => q.samples);
    expect(sizes).toHaveLength(4);
    expect(new Set(sizes)).toEqual(new Set([1000, 500]));
  });
});

describe('server errors', () => {
  it('show the server code and the first issue in one line', async () => {
    const server = await new FakeS4().start();
    server.writeHook = () => ({ status: 400, body: { error: { code: 'invalid_request', message: 'bad samples', details: { issues: [{ path: 'samples.0.ts', message: 'older than the backfill window' }] } } } });
    try {
      const r = await runCli(['import', '-', '--format', 'ndjson', '--quiet', '--url', server.url], { stdin: '{"metric":"m","ts":1,"fields":{"v":1}}\n' });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^s4 import: write failed, 1 samples not stored: POST http:\/\/127\.0\.0\.1:\d+\/v1\/write answered 400 invalid_request: bad samples \(samples\.0\.ts: older than the backfill window\) — 0 samples stored; fix the cause and re-run \(writes are idempotent\)\n$/);
    } finally {
      await server.stop();
    }
  });
});
