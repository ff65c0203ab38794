import { isAscii, isUtf8 } from 'node:buffer';
import type { Transform } from 'node:stream';
import * as zlib from 'node:zlib';
import type { FastifyInstance, FastifyRequest, RequestPayload } from 'fastify';
import { S4Error } from '@s4/core';
import { msgpack, snappyDecompress, snappyLength } from '@s4/format';
import { runSteps, runStepsSliced, scanMsgpackSteps, scanSeriesSteps, type ScannedWrite } from '@s4/engine';
import { parseWriteBodySlices } from './json-slices.js';

/** Content-Encodings a write body may use; anything else is a 415, never silently read as-is. */
const DECODERS = new Map<string, () => Transform>([
  ['gzip', () => zlib.createGunzip()],
  ['x-gzip', () => zlib.createGunzip()],
  ['deflate', () => zlib.createInflate()],
  // zstd where the runtime has it (Node >= 22.15).
  ...(typeof zlib.createZstdDecompress === 'function' ? [['zstd', () => zlib.createZstdDecompress()] as const] : []),
]);

/**
 * Paths whose bodies are line protocol whatever their Content-Type says: Influx clients send
 * `text/plain`, or none at all (the influx 1.x CLI sends an empty Content-Type).
 */
const LINE_PROTOCOL_PATHS = new Set(['/write', '/api/v2/write']);

/** Prometheus remote write and read: protobuf in Snappy's block format (Content-Encoding: snappy). */
const PROTOBUF = 'application/x-protobuf';

/** The MessagePack string `__proto__` (fixstr of 9 bytes). */
const PROTO_MSGPACK = Buffer.from([0xa9, ...Buffer.from('__proto__')]);

/**
 * How request bodies become values: strict UTF-8 for text (a truncated sequence is a 400, not
 * a U+FFFD stored for ever), the prototype-poisoning checks of Fastify's own JSON parser, and
 * Content-Encoding honoured or refused. The body limit applies to the decoded bytes, so a small
 * compressed bomb meets the same limit as a large plain body.
 */
export function installBodyDecoding(fastify: FastifyInstance, limits: { maxBodyBytes: number; maxNestingDepth: number; requestTimeoutMs: number }): void {
  const { maxBodyBytes, maxNestingDepth, requestTimeoutMs } = limits;
  // The influx 1.x CLI sends `Content-Type:` with nothing after it, which Fastify refuses as
  // malformed before any parser runs; on the line-protocol paths it means "no type".
  // The hooks here run for every request: callback hooks, not async ones (each async hook is a
  // promise and a turn of the microtask queue more per request).
  fastify.addHook('onRequest', (req, _reply, done) => {
    if (req.headers['content-type'] === '' && LINE_PROTOCOL_PATHS.has(req.url.split('?')[0]!)) delete req.headers['content-type'];
    done();
  });
  fastify.addHook('preParsing', (req, _reply, payload, done) => {
    let out: typeof payload;
    try {
      out = decoded(req, payload);
    } catch (e) {
      done(e as Error);
      return;
    }
    done(null, out);
  });
  const decoded = (req: FastifyRequest, payload: RequestPayload): RequestPayload => {
    // The whole body must arrive within the request timeout: a sender trickling bytes would
    // otherwise hold a connection (and its buffers) for as long as it likes. A body that has
    // arrived already (most small requests: one read holds them whole) needs no timer, which was
    // ~4 % of a single-sample write's CPU with its two listeners.
    const header = req.headers['content-encoding'];
    if (req.raw.complete && header === undefined) return payload;
    const timer = setTimeout(() => {
      const limit = `limit S4_REQUEST_TIMEOUT_MS=${requestTimeoutMs}`;
      payload.destroy(Object.assign(new Error(`the request body did not arrive within ${requestTimeoutMs} ms (${limit})`), { statusCode: 408 }));
    }, requestTimeoutMs);
    timer.unref();
    payload.once('end', () => clearTimeout(timer));
    payload.once('close', () => clearTimeout(timer));
    const encoding = (Array.isArray(header) ? header.join(',') : (header ?? '')).trim().toLowerCase();
    if (encoding === '' || encoding === 'identity') return payload;
    // Snappy's block format needs the whole body: the protobuf parser below decodes it.
    if (encoding === 'snappy' && mediaType(req.headers['content-type']) === PROTOBUF) return payload;
    const decoder = DECODERS.get(encoding);
    if (!decoder) throw new S4Error('unsupported_encoding', `Content-Encoding ${encoding} is not supported; use ${[...DECODERS.keys()].join(', ')} or none`, 415);
    const stream = decoder() as Transform & { receivedEncodedLength: number };
    // Fastify checks Content-Length against the bytes that arrived, which it reads from here.
    stream.receivedEncodedLength = 0;
    payload.on('data', (chunk: Buffer) => (stream.receivedEncodedLength += chunk.length));
    // The parser reports stream errors as its own 400; say what the body was not.
    stream.on('error', (e: Error) => Object.assign(e, { statusCode: 400, message: `body is not valid ${encoding}: ${e.message}` }));
    return payload.pipe(stream);
  };

  // `__proto__` keys are refused as Fastify refuses them; `constructor` is an ordinary name here,
  // because every map S4 builds from user names has no prototype.
  const parseJson = fastify.getDefaultJsonParser('error', 'ignore');
  fastify.removeContentTypeParser('application/json');
  fastify.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, function (this: FastifyInstance, req, body, done) {
    const bytes = body as Buffer;
    const write = req.url.split('?')[0] === '/v1/write';
    // A write body of the usual compact shape is read from its bytes (engine write/scan.ts): no
    // objects per series, identities by text, and no text of the body at all (4 MB of string per
    // scrape round): what the scan takes is ASCII without a backslash and names nothing
    // `__proto__`, so the UTF-8, escape and poisoning checks below have nothing to find in it.
    // Anything else (null) takes the path below, as it always did.
    if (write && bytes[0] === 0x7b && bytes[1] === 0x22) scanOr(bytes, () => scanSeriesSteps(bytes), done, () => parseText.call(this));
    else parseText.call(this);

    function parseText(this: FastifyInstance): void {
      let text: string;
      try {
        text = utf8(bytes);
      } catch (e) {
        done(e as Error, undefined);
        return;
      }
      const whole = () =>
        parseJson.call(this, req, text, (err, value) => {
          // A stack overflow inside JSON.parse reads as "invalid JSON"; name the limit when depth is why.
          if (err && /"__proto__"\s*:/.test(text)) done(new S4Error('invalid_request', '__proto__ is not accepted as a name (JSON and MessagePack decoders treat it specially)', 400), undefined);
          else if (err && nestingDepth(text) > maxNestingDepth)
            done(new S4Error('invalid_request', `body nests deeper than ${maxNestingDepth} levels (limit S4_MAX_NESTING_DEPTH=${maxNestingDepth})`, 400, { limit: 'S4_MAX_NESTING_DEPTH', max: maxNestingDepth }), undefined);
          else done(err, value);
        });
      // A text with neither `__proto__` nor any \u escape cannot name `__proto__`, so the poisoning
      // check (a regular expression over the whole text: 1.5 % of the HTTP thread on nested records) is left out;
      // any error goes through `whole` for its wording.
      const proto = text.includes('__proto__');
      const escapes = text.includes('\\u');
      if (!proto && !escapes && text.length < SLICED_BODY_CHARS) {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          whole();
          return;
        }
        done(null, value);
        return;
      }
      // A large write body is parsed in pieces with turns of the event loop between them; a body
      // naming __proto__ anywhere (escaped or not) goes the whole way, where the poisoning check refuses it.
      if (text.length < SLICED_BODY_CHARS || !write || proto || (escapes && SUSPECT_PROTO.test(text))) {
        whole();
        return;
      }
      parseSliced(text).then(
        (value) => (value ? done(null, value) : whole()),
        () => whole(),
      );
    }
  });
  fastify.addContentTypeParser(['application/x-ndjson', 'application/ndjson'], { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (req, body, done) => {
    const bytes = body as Buffer;
    const text = () => {
      try {
        done(null, utf8(bytes));
      } catch (e) {
        done(e as Error, undefined);
      }
    };
    // Compact samples a line, as the JSON parser above scans them (records packed from their bytes).
    if (req.url.split('?')[0] === '/v1/write' && bytes[0] === 0x7b && bytes[1] === 0x22) scanOr(bytes, () => scanSeriesSteps(bytes, true), done, text);
    else text();
  });
  fastify.addContentTypeParser('application/msgpack', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (req, body, done) => {
    const bytes = body as Buffer;
    // msgpackr renames a `__proto__` key to `__proto_` while decoding; refuse it instead of storing a name nobody wrote.
    if (bytes.includes(PROTO_MSGPACK)) {
      done(new S4Error('invalid_request', '__proto__ is not accepted as a name in MessagePack bodies', 400), undefined);
      return;
    }
    const unpack = () => {
      try {
        done(null, msgpack.unpack(bytes));
      } catch (e) {
        done(Object.assign(new Error(`body is not valid MessagePack: ${(e as Error).message}`), { statusCode: 400 }), undefined);
      }
    };
    // A write as the SDK packs it is read from its bytes, as JSON bodies are above (engine
    // write/scan.ts): no object per record or value; anything else (null) is decoded by msgpackr.
    if (req.url.split('?')[0] === '/v1/write' && (bytes[0] === 0x81 || bytes[0] === 0xde)) scanOr(bytes, () => scanMsgpackSteps(bytes), done, unpack);
    else unpack();
  });

  // Line protocol: strict UTF-8 text, for the Influx paths only; other paths keep Fastify's
  // refusal of a body without a known Content-Type.
  fastify.removeContentTypeParser('text/plain');
  const lineProtocol = (body: Buffer, done: (err: Error | null, body?: unknown) => void) => {
    try {
      done(null, utf8(body));
    } catch (e) {
      done(e as Error, undefined);
    }
  };
  fastify.addContentTypeParser('text/plain', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => lineProtocol(body as Buffer, done));
  fastify.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (req, body, done) => {
    if (!LINE_PROTOCOL_PATHS.has(req.url.split('?')[0]!)) {
      done(new S4Error('unsupported_media_type', `Content-Type ${req.headers['content-type'] || '(none)'} is not accepted here`, 415), undefined);
      return;
    }
    lineProtocol(body as Buffer, done);
  });
  // Grafana's Prometheus data source POSTs its query parameters as a form.
  fastify.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (_req, body, done) => {
    try {
      done(null, new URLSearchParams(utf8(body as Buffer)));
    } catch (e) {
      done(e as Error, undefined);
    }
  });
  fastify.addContentTypeParser(PROTOBUF, { parseAs: 'buffer', bodyLimit: maxBodyBytes }, (req, body, done) => {
    const header = req.headers['content-encoding'];
    if (String(header ?? '').trim().toLowerCase() !== 'snappy') {
      done(null, body);
      return;
    }
    try {
      // The announced length is checked before anything is allocated: a small block can claim 4 GiB.
      const length = snappyLength(body as Buffer);
      if (length > maxBodyBytes) throw new S4Error('limit_exceeded', `request body is larger than ${maxBodyBytes} bytes once decompressed (limit S4_MAX_BODY_BYTES=${maxBodyBytes})`, 413, { limit: 'S4_MAX_BODY_BYTES', max: maxBodyBytes });
      done(null, snappyDecompress(body as Buffer, maxBodyBytes));
    } catch (e) {
      done(e instanceof S4Error ? e : new S4Error('invalid_request', `body is not valid snappy: ${(e as Error).message}`, 400), undefined);
    }
  });
}

/** How long a large body's scan may hold the event loop at a time. */
const SCAN_SLICE_MS = 10;

/** Write bodies at least this long (characters) are parsed in pieces (json-slices.ts). */
const SLICED_BODY_CHARS = 1 << 20;

/**
 * A write body the engine's scan (write/scan.ts) may take: `done` with what it took, else
 * `general()` (the body's own parser, with its errors). A large body is scanned in slices with
 * turns of the event loop between them; the scan never throws, but a failure still falls back.
 */
function scanOr(bytes: Uint8Array, steps: () => Generator<void, ScannedWrite | null>, done: (err: Error | null, body?: unknown) => void, general: () => void): void {
  if (bytes.length >= SLICED_BODY_CHARS) {
    runStepsSliced(steps(), SCAN_SLICE_MS).then(
      (scanned) => (scanned ? done(null, scanned) : general()),
      () => general(),
    );
    return;
  }
  const scanned = runSteps(steps());
  if (scanned) done(null, scanned);
  else general();
}
/** secure-json-parse's own test for a `__proto__` key, escapes included. */
const SUSPECT_PROTO = /"(?:_|\\u005[Ff])(?:_|\\u005[Ff])(?:p|\\u0070)(?:r|\\u0072)(?:o|\\u006[Ff])(?:t|\\u0074)(?:o|\\u006[Ff])(?:_|\\u005[Ff])(?:_|\\u005[Ff])"\s*:/;
/** Characters per piece: a few milliseconds of JSON.parse. */
const PIECE_CHARS = 1 << 17;

/** A turn of the event loop after every piece. */
function parseSliced(text: string): Promise<Record<string, unknown[]> | null> {
  return runStepsSliced(parseWriteBodySlices(text, PIECE_CHARS), 0);
}

function mediaType(header: string | undefined): string {
  return (header ?? '').split(';')[0]!.trim().toLowerCase();
}

function utf8(body: Buffer): string {
  // ASCII (most bodies) is its own UTF-8 and decodes as latin1, a copy, without the UTF-8 decoder's per-byte work.
  if (isAscii(body)) return body.toString('latin1');
  if (!isUtf8(body)) throw new S4Error('invalid_request', 'body is not valid UTF-8 (a truncated or malformed byte sequence)', 400);
  return body.toString('utf8');
}

/** Deepest bracket nesting of a JSON text, brackets inside strings not counted. */
function nestingDepth(text: string): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) max = Math.max(max, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return max;
}
