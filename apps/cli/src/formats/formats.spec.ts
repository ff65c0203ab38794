import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { cellValue, csvCell, csvRecords } from './csv.js';
import { lines } from './input.js';
import { readSamples } from './samples.js';

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const x of it) out.push(x);
  return out;
}

async function* from<T>(items: T[]): AsyncGenerator<T> {
  yield* items;
}

describe('line protocol (the parser itself is tested in libs/format)', () => {
  it('reads a line-protocol file and names the line and column of a bad line', async () => {
    const dir = mkdtempSync(join(tmpdir(), 's4-lp-'));
    writeFileSync(join(dir, 'a.lp'), '# c\ncpu,host=a usage=0.5,n=3i 1700000000123456789\n\ncpu\n');
    const read = readSamples(join(dir, 'a.lp'), { precision: 'ns', stdin: Readable.from([]), onBytes: () => undefined });
    const it = read[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ metric: 'cpu', tags: { host: 'a' }, ts: 1700000000123, fields: { usage: 0.5, n: 3 } });
    await expect(it.next()).rejects.toMatchObject({ line: 4, message: 'line protocol, column 4: the line has no fields (expected a space, then field=value)' });
  });
});

describe('CSV', () => {
  it('reads RFC 4180 records, including quoted commas, quotes and line breaks', async () => {
    const input = ['a,b,c', '"x,1","say ""hi""",3', '"multi', 'line",,', ''];
    expect(await collect(csvRecords(from(input)))).toEqual([
      { record: ['a', 'b', 'c'], line: 1 },
      { record: ['x,1', 'say "hi"', '3'], line: 2 },
      { record: ['multi\nline', '', ''], line: 3 },
    ]);
  });

  it('quotes only what needs it', () => {
    expect(['plain', 'a,b', 'q"', 'l\nb'].map(csvCell)).toEqual(['plain', '"a,b"', '"q"""', '"l\nb"']);
  });

  it('types cells the way export writes them', () => {
    expect(['', 'true', 'false', '1.5', '-2e3', '{"a":[1]}', '[1,2]', 'hello', '{oops'].map(cellValue)).toEqual([undefined, true, false, 1.5, -2000, { a: [1] }, [1, 2], 'hello', '{oops']);
  });
});

describe('readSamples', () => {
  const dir = mkdtempSync(join(tmpdir(), 's4-cli-'));
  const csv = 'metric,tags,ts,temp,label\nenv,room=a;site=x,1000,21.5,"a,b"\nenv,,2000,,plain\n';
  const ndjson = '{"metric":"env","tags":{"room":"a"},"ts":1000,"fields":{"temp":21.5}}\n\n{"metric":"env","tags":{},"ts":2000,"fields":{"label":"x"}}\n';

  it('detects format by name, by content, and gzip by magic bytes', async () => {
    const cases: [string, Buffer][] = [
      ['a.csv', Buffer.from(csv)],
      ['a.data', Buffer.from(csv)],
      ['b.csv.gz', gzipSync(csv)],
      ['b.bin', gzipSync(csv)],
    ];
    for (const [name, bytes] of cases) {
      writeFileSync(join(dir, name), bytes);
      let counted = 0;
      const samples = await collect(readSamples(join(dir, name), { precision: 'ns', stdin: Readable.from([]), onBytes: (n) => (counted += n) }));
      expect(samples, name).toEqual([
        { metric: 'env', tags: { room: 'a', site: 'x' }, ts: 1000, fields: { temp: 21.5, label: 'a,b' } },
        { metric: 'env', tags: {}, ts: 2000, fields: { label: 'plain' } },
      ]);
      expect(counted).toBe(bytes.length);
    }
    writeFileSync(join(dir, 'c'), gzipSync(ndjson));
    expect(await collect(readSamples(join(dir, 'c'), { precision: 'ns', stdin: Readable.from([]), onBytes: () => undefined }))).toHaveLength(2);
    const stdin = Readable.from([Buffer.from('cpu,h=a v=1 1000000\n')]);
    expect(await collect(readSamples('-', { precision: 'ns', stdin, onBytes: () => undefined }))).toEqual([{ metric: 'cpu', tags: { h: 'a' }, ts: 1, fields: { v: 1 } }]);
  });

  it('rejects a CSV whose header is not metric,tags,ts', async () => {
    writeFileSync(join(dir, 'bad.csv'), 'time,value\n1,2\n');
    await expect(collect(readSamples(join(dir, 'bad.csv'), { precision: 'ns', stdin: Readable.from([]), onBytes: () => undefined }))).rejects.toThrow(/metric,tags,ts/);
  });
});

describe('lines', () => {
  it('splits across chunk boundaries, CRLF and multi-byte characters', async () => {
    const bytes = Buffer.from('a\r\nbé\nc');
    const chunks = [...bytes].map((b) => Uint8Array.of(b));
    expect(await collect(lines(from(chunks)))).toEqual(['a', 'bé', 'c']);
  });
});
