import { writeFileSync, mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modeEnv } from '../support/modes.js';
import { Program, requireProgram, until } from '../support/programs.js';
import { freePort, S4Process } from '../support/s4-process.js';

const KEY = 'graphite-test-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

type Rendered = { target: string; tags: Record<string, string>; datapoints: [number | null, number][] }[];

/** Sends text over one TCP connection and closes it. */
async function send(port: number, text: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const s = connect(port, '127.0.0.1', () => s.end(text));
    s.on('close', () => resolve());
    s.on('error', reject);
  });
}

async function render(s4: S4Process, params: Record<string, string>): Promise<{ status: number; body: Rendered }> {
  const r = await fetch(`${s4.url}/render?${new URLSearchParams(params)}`, { headers: auth });
  return { status: r.status, body: (await r.json()) as Rendered };
}

describe('Graphite: plaintext over TCP through carbon-c-relay, and /render', () => {
  let s4: S4Process;
  let relay: Program;
  let relayPort: number;
  let graphitePort: number;
  const base = Math.floor(Date.now() / 1000) - 3600;

  beforeAll(async () => {
    const binary = requireProgram('carbon-c-relay', 'carbon-c-relay');
    graphitePort = await freePort();
    s4 = await S4Process.start(await modeEnv('embedded', { S4_API_KEYS: KEY, S4_GRAPHITE_PORT: String(graphitePort) }));
    relayPort = await freePort();
    const dir = mkdtempSync(join(tmpdir(), 's4-graphite-'));
    writeFileSync(join(dir, 'relay.conf'), `cluster s4 forward 127.0.0.1:${graphitePort};\nmatch * send to s4 stop;\n`);
    // -s: submission mode (no statistics of its own in the stream).
    relay = Program.start(binary, ['-f', join(dir, 'relay.conf'), '-p', String(relayPort), '-s', '-w', '1']);
    await until('carbon-c-relay to listen', 30_000, async () => {
      if (relay.exited()) throw new Error(`carbon-c-relay exited:\n${relay.output()}`);
      await send(relayPort, '');
      return true;
    });
  });

  afterAll(async () => {
    await relay?.stop();
    await s4?.stop();
  });

  it('stores plain and tagged points sent through carbon-c-relay', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 600; i++) {
      lines.push(`servers.web1.cpu ${Math.sin(i / 20) * 50 + 50} ${base + i}`);
      lines.push(`servers.web2.cpu ${i} ${base + i}`);
    }
    lines.push(`disk.used;host=db1;dc=eu 42.5 ${base}`);
    await send(relayPort, `${lines.join('\n')}\n`);
    const got = await until('all 601 points of web1/web2 and the tagged point in S4', 60_000, async () => {
      const r = await render(s4, { target: 'servers.*.cpu', from: String(base), until: String(base + 600), format: 'json' });
      const tagged = await render(s4, { target: 'disk.used', from: String(base - 1), until: String(base + 1) });
      return r.body.length === 2 && r.body.every((s) => s.datapoints.length === 600) && tagged.body.length === 1 ? { r, tagged } : undefined;
    });
    expect(got.r.body.map((s) => s.target)).toEqual(['servers.web1.cpu', 'servers.web2.cpu']);
    expect(got.r.body[1]!.datapoints.slice(0, 3)).toEqual([
      [0, base],
      [1, base + 1],
      [2, base + 2],
    ]);
    expect(got.tagged.body).toEqual([{ target: 'disk.used;dc=eu;host=db1', tags: { dc: 'eu', host: 'db1', name: 'disk.used' }, datapoints: [[42.5, base]] }]);
  });

  it('maps maxDataPoints to the pixel-faithful reduction: at most that many points, the extremes kept', async () => {
    const { status, body } = await render(s4, { target: 'servers.web1.cpu', from: String(base), until: String(base + 600), maxDataPoints: '40' });
    expect(status).toBe(200);
    const points = body[0]!.datapoints;
    expect(points.length).toBeLessThanOrEqual(40);
    expect(points.length).toBeGreaterThan(10);
    const values = points.map(([v]) => v!);
    const all = Array.from({ length: 600 }, (_, i) => Math.sin(i / 20) * 50 + 50);
    expect(Math.max(...values)).toBe(Math.max(...all));
    expect(Math.min(...values)).toBe(Math.min(...all));
    expect(points[0]![1]).toBe(base);
    expect(points.at(-1)![1]).toBe(base + 599);
  });

  it('skips bad lines sent straight to S4\'s port and keeps the good ones of the same connection', async () => {
    await send(graphitePort, `bad.line notanumber ${base}\ngood.line 1 ${base}\nonly-a-path\ngood.line 2 ${base + 1}`);
    const r = await until('the two good points', 30_000, async () => {
      const got = await render(s4, { target: 'good.line', from: String(base), until: String(base + 2) });
      return got.body[0]?.datapoints.length === 2 ? got : undefined;
    });
    expect(r.body[0]!.datapoints).toEqual([
      [1, base],
      [2, base + 1],
    ]);
    expect((await render(s4, { target: 'bad.line', from: String(base), until: String(base + 2) })).body).toEqual([]);
  });

  it('answers /metrics/find with the tree Grafana browses', async () => {
    const find = async (query: string) => (await (await fetch(`${s4.url}/metrics/find?query=${encodeURIComponent(query)}&from=${base - 10}&until=${base + 700}`, { headers: auth })).json());
    expect(await find('*')).toEqual(
      expect.arrayContaining([
        { text: 'servers', id: 'servers', leaf: 0, expandable: 1, allowChildren: 1 },
        { text: 'disk', id: 'disk', leaf: 0, expandable: 1, allowChildren: 1 },
      ]),
    );
    expect(await find('servers.*')).toEqual([
      { text: 'web1', id: 'servers.web1', leaf: 0, expandable: 1, allowChildren: 1 },
      { text: 'web2', id: 'servers.web2', leaf: 0, expandable: 1, allowChildren: 1 },
    ]);
    expect(await find('servers.web{1,3}.*')).toEqual([{ text: 'cpu', id: 'servers.web1.cpu', leaf: 1, expandable: 0, allowChildren: 0 }]);
  });

  it('refuses Graphite functions, other formats and bad times with 400, and needs a key', async () => {
    expect((await fetch(`${s4.url}/render?target=sumSeries(a.*)`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${s4.url}/render?target=a&format=png`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${s4.url}/render?target=a&from=yesterday`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${s4.url}/render?target=a&maxDataPoints=2`, { headers: auth })).status).toBe(400);
    expect((await fetch(`${s4.url}/render?target=a`)).status).toBe(401);
  });
});
