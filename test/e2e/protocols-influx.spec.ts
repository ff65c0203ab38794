import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MODES, modeEnv } from '../support/modes.js';
import { requireProgram } from '../support/programs.js';
import { S4Process } from '../support/s4-process.js';

const KEY = 'influx-test-key-0123456789';
const auth = { authorization: `Bearer ${KEY}` };

async function read(s4: S4Process, metric: string): Promise<{ metric: string; tags: Record<string, string>; ts: number[]; fields: Record<string, unknown[]> }[]> {
  const r = await fetch(`${s4.url}/v1/query?metric=${encodeURIComponent(metric)}&from=0&to=4102444800000`, { headers: auth });
  expect(r.status).toBe(200);
  return ((await r.json()) as { series: never[] }).series;
}

describe.each(MODES)('Influx line protocol (%s): the influx 1.x CLI, /write and /api/v2/write', (mode) => {
  let s4: S4Process;
  let ns: string;
  const dir = mkdtempSync(join(tmpdir(), 's4-influx-'));

  beforeAll(async () => {
    const env = await modeEnv(mode, { S4_API_KEYS: KEY });
    ns = env.S4_NAMESPACE!;
    s4 = await S4Process.start(env);
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it('influx -import stores every field type and escape of the spec, a line as one series with all its fields', async () => {
    const influx = requireProgram('influx', 'influxdb-client');
    const [host, port] = s4.url.replace('http://', '').split(':') as [string, string];
    const file = join(dir, 'import.txt');
    writeFileSync(
      file,
      [
        '# DML',
        `# CONTEXT-DATABASE: ${ns}`,
        'weather,station=oslo\\ blindern,region=no\\,north temp=-3.5,hum=81i,count=7u,ok=true,note="snow, \\"light\\" \\\\ wind=3" 1700000000000000000',
        'weather,station=oslo\\ blindern,region=no\\,north temp=-4,hum=80i,count=8u,ok=F,note="" 1700000060000000000',
        'my\\ metric,k\\=ey=v\\=al value=1e3 1700000000000000000',
        'flags b1=t,b2=T,b3=true,b4=True,b5=TRUE,b6=f,b7=F,b8=false,b9=False,b10=FALSE 1700000000000000000',
      ].join('\n') + '\n',
    );
    const { stdout, stderr } = await promisify(execFile)(influx, ['-host', host, '-port', port, '-username', 'anyone', '-password', KEY, '-import', '-path', file, '-precision', 'ns']);
    expect(`${stdout}${stderr}`).toMatch(/Processed 4 inserts/);
    expect(`${stdout}${stderr}`).toMatch(/Failed 0 inserts/);

    expect(await read(s4, 'weather')).toEqual([
      {
        metric: 'weather',
        tags: { region: 'no,north', station: 'oslo blindern' },
        ts: [1_700_000_000_000, 1_700_000_060_000],
        fields: { temp: [-3.5, -4], hum: [81, 80], count: [7, 8], ok: [true, false], note: ['snow, "light" \\ wind=3', ''] },
      },
    ]);
    expect(await read(s4, 'my metric')).toEqual([{ metric: 'my metric', tags: { 'k=ey': 'v=al' }, ts: [1_700_000_000_000], fields: { value: [1000] } }]);
    const [flags] = await read(s4, 'flags');
    expect(Object.fromEntries(Object.entries(flags!.fields).map(([k, v]) => [k, v[0]]))).toEqual({ b1: true, b2: true, b3: true, b4: true, b5: true, b6: false, b7: false, b8: false, b9: false, b10: false });
  });

  it('/api/v2/write takes gzip bodies and every precision, with Token auth', async () => {
    const body = gzipSync('gz,host=a v=1 1700000000\ngz,host=a v=2 1700000001\n');
    const r = await fetch(`${s4.url}/api/v2/write?org=any&bucket=${ns}&precision=s`, { method: 'POST', headers: { authorization: `Token ${KEY}`, 'content-encoding': 'gzip', 'content-type': 'text/plain; charset=utf-8' }, body });
    expect(r.status).toBe(204);
    for (const [precision, ts] of [['ms', '1700000002000'], ['us', '1700000003000000'], ['ns', '1700000004000000000']] as const) {
      const w = await fetch(`${s4.url}/api/v2/write?bucket=${ns}&precision=${precision}`, { method: 'POST', headers: { authorization: `Token ${KEY}` }, body: `gz,host=a v=9 ${ts}` });
      expect(w.status, precision).toBe(204);
    }
    const v1 = await fetch(`${s4.url}/write?db=${ns}&precision=m`, { method: 'POST', headers: { authorization: `Basic ${Buffer.from(`u:${KEY}`).toString('base64')}` }, body: 'gz,host=a v=5 28333334' });
    expect(v1.status).toBe(204);
    expect((await read(s4, 'gz'))[0]!.ts).toEqual([1_700_000_000_000, 1_700_000_001_000, 1_700_000_002_000, 1_700_000_003_000, 1_700_000_004_000, 1_700_000_040_000]);
  });

  it('a bad line is a 400 naming its line and column, in the shape each client reads, and nothing is written', async () => {
    const text = 'bad,host=a v=1 1700000000000000000\nbad,host=a v=1,v=2 1700000000000000000\nbad v=oops\n';
    const v2 = await fetch(`${s4.url}/api/v2/write?bucket=${ns}`, { method: 'POST', headers: auth, body: text });
    expect(v2.status).toBe(400);
    const v2body = (await v2.json()) as { code: string; message: string };
    expect(v2body.code).toBe('invalid');
    expect(v2body.message).toContain('line 2, column 16: field key "v" appears twice');
    expect(v2body.message).toContain('line 3, column 7');
    const v1 = await fetch(`${s4.url}/write?db=${ns}`, { method: 'POST', headers: auth, body: text });
    expect(v1.status).toBe(400);
    expect(((await v1.json()) as { error: string }).error).toContain('line 2, column 16');
    // A line the parser accepts but the validator refuses is named by its line too.
    const tooMany = await fetch(`${s4.url}/write?db=${ns}`, { method: 'POST', headers: auth, body: `bad v=1 1700000000000000000\nbad,${Array.from({ length: 40 }, (_, i) => `t${i}=x`).join(',')} v=1 1700000000000000000` });
    expect(tooMany.status).toBe(400);
    expect(((await tooMany.json()) as { error: string }).error).toMatch(/line 2\.tags: has 40 tags/);
    expect(await read(s4, 'bad')).toEqual([]);
  });

  it('refuses an unknown database or bucket (404), a missing one, a bad precision, and a request without a key', async () => {
    const v1 = await fetch(`${s4.url}/write?db=other`, { method: 'POST', headers: auth, body: 'm v=1' });
    expect(v1.status).toBe(404);
    expect(((await v1.json()) as { error: string }).error).toContain(`this server stores namespace "${ns}"`);
    const v2 = await fetch(`${s4.url}/api/v2/write?bucket=other`, { method: 'POST', headers: auth, body: 'm v=1' });
    expect(await v2.json()).toMatchObject({ code: 'not found' });
    expect((await fetch(`${s4.url}/api/v2/write`, { method: 'POST', headers: auth, body: 'm v=1' })).status).toBe(400);
    expect((await fetch(`${s4.url}/api/v2/write?bucket=${ns}&precision=m`, { method: 'POST', headers: auth, body: 'm v=1' })).status).toBe(400);
    expect((await fetch(`${s4.url}/write?db=${ns}`, { method: 'POST', body: 'm v=1' })).status).toBe(401);
    expect((await fetch(`${s4.url}/write?db=${ns}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{"m":1}' })).status).toBe(415);
    expect((await fetch(`${s4.url}/ping`)).status).toBe(204);
  });
});
