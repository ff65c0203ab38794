import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/**
 * Reads a file (or stdin for `-`) as byte chunks, gunzipping when the data starts with the gzip
 * magic bytes (1f 8b) whatever the file is called. `onBytes` counts bytes as stored (compressed).
 */
export async function* readInput(path: string, stdin: Readable, onBytes: (n: number) => void): AsyncGenerator<Buffer> {
  const raw: Readable = path === '-' ? stdin : createReadStream(path, { highWaterMark: 1 << 20 });
  const chunks = raw[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  let first = await chunks.next();
  if (first.done === true) return;
  // Two bytes decide; a first chunk of one byte (stdin) needs the next one.
  while (first.value.length < 2) {
    const next = await chunks.next();
    if (next.done === true) break;
    first = { done: false, value: Buffer.concat([first.value, next.value]) };
  }
  const head = first.value;
  async function* counted(): AsyncGenerator<Buffer> {
    onBytes(head.length);
    yield head;
    for (;;) {
      const next = await chunks.next();
      if (next.done === true) return;
      onBytes(next.value.length);
      yield next.value;
    }
  }
  if (head[0] !== 0x1f || head[1] !== 0x8b) {
    yield* counted();
    return;
  }
  const gunzip = createGunzip();
  const feed = (async () => {
    try {
      for await (const chunk of counted()) if (!gunzip.write(chunk)) await new Promise((resolve) => gunzip.once('drain', resolve));
      gunzip.end();
    } catch (error) {
      gunzip.destroy(error as Error);
    }
  })();
  for await (const chunk of gunzip) yield chunk as Buffer;
  await feed;
}

/** Splits UTF-8 byte chunks into lines (without `\n` or `\r\n`), numbering from 1. */
export async function* lines(chunks: AsyncIterable<Uint8Array>): AsyncGenerator<string> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  let carry = '';
  for await (const chunk of chunks) {
    const text = carry + decoder.decode(chunk, { stream: true });
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      yield text.slice(start, end);
      start = nl + 1;
    }
    carry = text.slice(start);
  }
  carry += decoder.decode();
  if (carry.endsWith('\r')) carry = carry.slice(0, -1);
  if (carry !== '') yield carry;
}
