import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { startServer, type RunningServer } from '@s4/api';
import { expectOk, post, queryAll } from '../support/client.js';
import { modeEnv } from '../support/modes.js';
import { S4Process, freePort } from '../support/s4-process.js';
import { tempDir, uniqueNamespace } from '../support/servers.js';

const H = 3_600_000;
const MAIN = fileURLToPath(new URL('../../apps/api/dist/main.js', import.meta.url));

/** An in-process server (main thread from the TypeScript sources, role threads from apps/api/dist). */
async function embedded(extra: Record<string, string> = {}): Promise<RunningServer> {
  return startServer({
    S4_DATA_DIR: tempDir('roles'),
    S4_NAMESPACE: uniqueNamespace(),
    S4_HOST: '127.0.0.1',
    S4_PORT: '0',
    S4_LOG_LEVEL: 'silent',
    S4_EMBEDDED_FSYNC: 'never',
    S4_FLUSH_INTERVAL_MS: '3600000',
    S4_ROLLUP_INTERVAL_MS: '3600000',
    ...extra,
  });
}

/** Series × samples in one closed hour, written in batches of columnar series. */
async function load(url: string, series: number, samples: number, hour = Math.floor(Date.now() / H) * H - 2 * H): Promise<void> {
  const ts = Array.from({ length: samples }, (_, i) => hour + i * 1000);
  for (let i = 0; i < series; i += 5000) {
    const batch = [];
    for (let s = i; s < Math.min(series, i + 5000); s++) batch.push({ metric: 'roles.m', tags: { host: `h${s % 100}`, dev: `d${s}` }, ts, fields: { value: ts.map((_, k) => s + k) } });
    await expectOk(await post(`${url}/v1/write`, { series: batch }));
  }
}

async function metrics(url: string): Promise<string> {
  return (await expectOk(await fetch(`${url}/metrics`))).text();
}

/** The value of one sample line of /metrics (name plus its exact label set), or undefined. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Thread ids of a role's running threads, as /metrics lists them. */
function threadIds(text: string, role: string): number[] {
  return [...text.matchAll(new RegExp(`^s4_worker_thread_info\\{role="${role}",thread_id="(\\d+)"\\} 1$`, 'gm'))].map((m) => Number(m[1]));
}

async function until(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))]!;
}

describe('process roles: the segment and aggregate roles run in worker threads', () => {
  const servers: { close(): Promise<void> }[] = [];
  afterEach(async () => {
    for (const s of servers.splice(0)) await s.close();
  });

  it('flushes in the segment thread while the HTTP thread keeps answering', async () => {
    const server = await embedded();
    servers.push(server);
    const SERIES = 50_000;
    await load(server.url, SERIES, 4);

    // The structural fact: the process runs its segment role in a worker thread (id ≠ 0, the main thread's).
    const segment = server.roles.threads.get('segment')!;
    expect(segment.threadId).toBeGreaterThan(0);
    expect(threadIds(await metrics(server.url), 'segment')).toEqual([segment.threadId]);
    expect(threadIds(await metrics(server.url), 'aggregate')).toEqual([server.roles.threads.get('aggregate')!.threadId]);

    let done = false;
    const flush = post(`${server.url}/v1/admin/flush`, {}).finally(() => (done = true));
    const latencies: number[] = [];
    while (!done) {
      const started = performance.now();
      expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
      latencies.push(performance.now() - started);
      await new Promise((r) => setTimeout(r, 10));
    }
    const stats = (await (await expectOk(await flush)).json()) as Record<string, number>;
    expect(Object.keys(stats).sort()).toEqual(['busyShards', 'bytes', 'hotBytes', 'objects', 'samples', 'series']);
    expect(stats.samples).toBe(SERIES * 4);
    expect(stats.series).toBe(SERIES);

    // The pass was the thread's: only a role thread's report moves these counters.
    const text = await metrics(server.url);
    expect(sample(text, 's4_worker_passes_total{role="segment",trigger="admin"}')).toBe(1);
    expect(sample(text, 's4_flush_samples_total')).toBe(SERIES * 4);
    // Loose on purpose (a shared 2-core machine): before the threads, a flush of this size held the
    // event loop for hundreds of milliseconds at a time.
    expect(latencies.length).toBeGreaterThan(0);
    expect(percentile(latencies, 99)).toBeLessThan(250);

    const all = await queryAll(server.url, { metric: 'roles.m', tag: ['dev:d123'], from: '0', to: String(Date.now()) }, 'json');
    expect([...all.values()][0]!.fields.value).toEqual([123, 124, 125, 126]);
  });

  it("exports the HTTP thread's event-loop delay since the previous scrape", async () => {
    const server = await embedded();
    servers.push(server);
    await metrics(server.url); // the delays before this point are not counted below
    // The server runs in this thread: holding it is what a long slice of bulk work would do.
    await new Promise((r) => setTimeout(r, 30));
    const until = performance.now() + 250;
    while (performance.now() < until);
    await new Promise((r) => setTimeout(r, 30));
    const held = await metrics(server.url);
    expect(sample(held, 's4_event_loop_delay_seconds{quantile="1"}')).toBeGreaterThanOrEqual(0.25);
    expect(sample(held, 's4_event_loop_delay_seconds{quantile="0.5"}')).toBeLessThan(0.25);
    // Reset by the scrape: the next one sees only what came after.
    await new Promise((r) => setTimeout(r, 50));
    expect(sample(await metrics(server.url), 's4_event_loop_delay_seconds{quantile="1"}')).toBeLessThan(0.25);
  });

  it('restarts a segment thread that died, and keeps serving meanwhile', async () => {
    const server = await embedded();
    servers.push(server);
    await load(server.url, 100, 10);
    const segment = server.roles.threads.get('segment')!;
    const aggregate = server.roles.threads.get('aggregate')!;
    const [first, aggregateId] = [segment.threadId, aggregate.threadId];

    await segment.terminate(); // as a crash would end it
    expect(segment.threadId).toBe(0);
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${server.url}/readyz`)).status).toBe(200);
    await expectOk(await post(`${server.url}/v1/write`, { samples: [{ metric: 'roles.m', tags: { dev: 'late' }, ts: Date.now() - 2 * H, fields: { value: 1 } }] }));
    // An admin flush sent while the thread is down waits for the new one.
    const stats = (await (await expectOk(await post(`${server.url}/v1/admin/flush`, {}))).json()) as { samples: number };
    expect(stats.samples).toBe(100 * 10 + 1);

    expect(segment.threadId).toBeGreaterThan(0);
    expect(segment.threadId).not.toBe(first);
    expect(segment.crashes).toBe(1);
    expect(aggregate.threadId).toBe(aggregateId);
    const text = await metrics(server.url);
    expect(threadIds(text, 'segment')).toEqual([segment.threadId]);
    expect(sample(text, 's4_worker_thread_crashes_total{role="segment"}')).toBe(1);
  });

  it('runs admin passes in one-off threads in an api-only process', async () => {
    const server = await embedded({ S4_ROLE: 'api' });
    servers.push(server);
    expect(server.roles.threads.size).toBe(0);
    await load(server.url, 300, 5);
    const flushed = (await (await expectOk(await post(`${server.url}/v1/admin/flush`, {}))).json()) as { samples: number; objects: number };
    expect(flushed.samples).toBe(1500);
    const rolled = (await (await expectOk(await post(`${server.url}/v1/admin/rollup`, {}))).json()) as { objects: number; series: number };
    expect(rolled.series).toBe(300);
    const rebuilt = (await (await expectOk(await post(`${server.url}/v1/admin/rebuild-catalog`, {}))).json()) as { parts: number };
    expect(rebuilt.parts).toBe(flushed.objects);
    const text = await metrics(server.url);
    expect(sample(text, 's4_worker_passes_total{role="segment",trigger="admin"}')).toBe(1);
    expect(sample(text, 's4_worker_passes_total{role="aggregate",trigger="admin"}')).toBe(1);
    expect(sample(text, 's4_worker_pass_seconds_count{role="aggregate",trigger="admin"}')).toBe(1);
    expect(sample(text, 's4_worker_pass_seconds_sum{role="segment",trigger="admin"}')).toBeGreaterThan(0);
    expect(threadIds(text, 'segment')).toEqual([]); // the one-off threads have ended
    const all = await queryAll(server.url, { metric: 'roles.m', from: '0', to: String(Date.now()) }, 'msgpack');
    expect(all.size).toBe(300);
  });

  it('serves only health and metrics in a segment-only process', async () => {
    const server = await embedded({ S4_ROLE: 'segment' });
    servers.push(server);
    expect([...server.roles.threads.keys()]).toEqual(['segment']);
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${server.url}${path}`)).status).toBe(200);
    expect((await fetch(`${server.url}/v1/series`)).status).toBe(404);
    expect(threadIds(await metrics(server.url), 'segment')).toEqual([server.roles.threads.get('segment')!.threadId]);
  });

  it('split deployment on Redis and S3: a segment process flushes what an api process wrote', async () => {
    const env = await modeEnv('redis+s3');
    const api = await S4Process.start({ ...env, S4_ROLE: 'api' });
    servers.push({ close: () => api.stop() });
    const segment = await S4Process.start({ ...env, S4_ROLE: 'segment', S4_FLUSH_INTERVAL_MS: '200', S4_FLUSH_GRACE_MS: '0' });
    servers.push({ close: () => segment.stop() });
    expect((await fetch(`${segment.url}/v1/write`, { method: 'POST' })).status).toBe(404);

    await load(api.url, 200, 30);
    await until('the segment process to flush', async () => sample(await metrics(segment.url), 's4_flush_samples_total') === 200 * 30);
    const text = await metrics(segment.url);
    expect(threadIds(text, 'segment').length).toBe(1);
    expect(sample(text, 's4_worker_passes_total{role="segment",trigger="periodic"}')).toBeGreaterThan(0);
    // Nothing is left hot: the api process's one-off flush finds nothing to do.
    expect(((await (await expectOk(await post(`${api.url}/v1/admin/flush`, {}))).json()) as { samples: number }).samples).toBe(0);
    const all = await queryAll(api.url, { metric: 'roles.m', from: '0', to: String(Date.now()) }, 'msgpack');
    expect(all.size).toBe(200);
    expect([...all.values()].every((s) => s.ts.length === 30)).toBe(true);
  });

  it('on SIGTERM lets the running flush finish, stops the threads and exits 0', async () => {
    const env = await modeEnv('embedded');
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    let log = '';
    const start = () => {
      const child = spawn(process.execPath, [MAIN], { env: { PATH: process.env.PATH ?? '', ...env, S4_PORT: String(port), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'warn', S4_EMBEDDED_FSYNC: 'never' }, stdio: ['ignore', 'pipe', 'pipe'] });
      child.stdout.on('data', (d: Buffer) => (log += d.toString()));
      child.stderr.on('data', (d: Buffer) => (log += d.toString()));
      const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
      return { child, exited };
    };
    const first = start();
    servers.push({ close: async () => void first.child.kill('SIGKILL') });
    await until('the server to listen', () => fetch(`${url}/readyz`).then((r) => r.ok, () => false));
    await load(url, 20_000, 4);
    const flush = fetch(`${url}/v1/admin/flush`, { method: 'POST' });
    await new Promise((r) => setTimeout(r, 300));
    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    const answer = await flush;
    expect(answer.status).toBe(200);
    expect(((await answer.json()) as { samples: number }).samples).toBe(20_000 * 4);
    expect(log).not.toMatch(/ERROR|unexpectedly/);

    const second = start();
    servers.push({ close: async () => void second.child.kill('SIGTERM') });
    await until('the restarted server', () => fetch(`${url}/readyz`).then((r) => r.ok, () => false));
    const again = (await (await expectOk(await post(`${url}/v1/admin/flush`, {}))).json()) as { samples: number };
    expect(again.samples).toBe(0);
    const all = await queryAll(url, { metric: 'roles.m', tag: ['dev:d19999'], from: '0', to: String(Date.now()) }, 'json');
    expect([...all.values()][0]!.ts.length).toBe(4);
    second.child.kill('SIGTERM');
    expect(await second.exited).toBe(0);
  });
});
