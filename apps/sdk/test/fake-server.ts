// A small in-memory stand-in for the S4 HTTP API, for testing the SDK's own HTTP behaviour
// (batching, retries, back-pressure, decoding). The real server is exercised in server.spec.ts.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { EventEmitter } from 'node:events';
import { Packr, Unpackr } from 'msgpackr';

const packr = new Packr({ useRecords: false, moreTypes: true, variableMapSize: true });
const unpackr = new Unpackr({ useRecords: false, moreTypes: true, mapsAsObjects: true, int64AsType: 'number' });

export interface StoredSample {
  metric: string;
  tags: Record<string, string>;
  ts: number;
  fields: Record<string, unknown>;
}

/** Decides the answer to one write request; return undefined to store the samples normally. */
export type WriteHook = (samples: StoredSample[], req: IncomingMessage) => { status: number; body?: unknown; headers?: Record<string, string> } | 'destroy' | undefined | Promise<{ status: number; body?: unknown } | 'destroy' | undefined>;

export class FakeS4 {
  readonly store = new Map<string, StoredSample>();
  readonly requests: { method: string; path: string; headers: IncomingMessage['headers']; samples?: number }[] = [];
  writeHook: WriteHook | undefined;
  /** Samples per msgpack chunk in query answers. */
  chunkSize = 1000;
  /** Bytes per socket write of a query answer (small values exercise the stream decoder). */
  sliceBytes = 1 << 16;
  inFlightWrites = 0;
  maxInFlightWrites = 0;
  server: Server | undefined;
  port = 0;
  /** 'request' when a request was received (its body read, before it is answered). */
  readonly events = new EventEmitter();

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(port = 0): Promise<this> {
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((error: unknown) => {
        res.statusCode = 500;
        res.end(JSON.stringify({ error: { code: 'internal', message: String(error), id: 'test-1' } }));
      });
    });
    server.keepAliveTimeout = 100;
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (server === undefined) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Resolves once `n` requests in all have been received (answered or not). */
  async received(n = 1): Promise<void> {
    while (this.requests.length < n) await new Promise((resolve) => this.events.once('request', resolve));
  }

  samples(): StoredSample[] {
    return [...this.store.values()];
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    const body = await readAll(req);
    const record: FakeS4['requests'][number] = { method: req.method ?? 'GET', path: url.pathname, headers: req.headers };
    this.requests.push(record);
    this.events.emit('request', record);
    if (url.pathname === '/v1/write' && req.method === 'POST') {
      const type = req.headers['content-type'] ?? '';
      const parsed = (type.includes('msgpack') ? unpackr.unpack(body) : JSON.parse(body.toString('utf8'))) as {
        samples?: StoredSample[];
        series?: { metric: string; tags: Record<string, string>; ts: number[]; fields: Record<string, unknown[]> }[];
      };
      // Columnar entries expand to samples as the real server reads them: null means absent.
      const fromColumns = (parsed.series ?? []).flatMap((c) =>
        c.ts.map((ts, i) => ({
          metric: c.metric,
          tags: c.tags,
          ts,
          fields: Object.fromEntries(Object.entries(c.fields).flatMap(([f, col]) => (col[i] === null ? [] : [[f, col[i]]]))),
        })),
      ) as StoredSample[];
      const samples = [...(parsed.samples ?? []), ...fromColumns];
      record.samples = samples.length;
      this.inFlightWrites++;
      this.maxInFlightWrites = Math.max(this.maxInFlightWrites, this.inFlightWrites);
      try {
        const decision = await this.writeHook?.(samples, req);
        if (decision === 'destroy') {
          req.socket.destroy();
          return;
        }
        if (decision !== undefined) {
          res.writeHead(decision.status, { 'content-type': 'application/json', ...('headers' in decision ? decision.headers : {}) });
          res.end(decision.body === undefined ? '' : JSON.stringify(decision.body));
          return;
        }
        for (const s of samples) this.store.set(`${key(s)}@${s.ts}`, s);
        res.writeHead(204).end();
      } finally {
        this.inFlightWrites--;
      }
      return;
    }
    if (url.pathname === '/v1/query' && req.method === 'POST') {
      const q = JSON.parse(body.toString('utf8')) as { metric: string; tags: Record<string, string>; from: number; to: number };
      const bySeries = new Map<string, StoredSample[]>();
      for (const s of this.store.values()) {
        if (s.metric !== q.metric || s.ts < q.from || s.ts >= q.to) continue;
        if (!Object.entries(q.tags).every(([k, v]) => s.tags[k] === v)) continue;
        const list = bySeries.get(key(s)) ?? [];
        list.push(s);
        bySeries.set(key(s), list);
      }
      res.writeHead(200, { 'content-type': 'application/msgpack' });
      for (const k of [...bySeries.keys()].sort()) {
        const list = (bySeries.get(k) ?? []).sort((a, b) => a.ts - b.ts);
        for (let i = 0; i < list.length; i += this.chunkSize) {
          const part = list.slice(i, i + this.chunkSize);
          const names = new Set(part.flatMap((s) => Object.keys(s.fields)));
          const fields: Record<string, unknown> = {};
          for (const name of names) {
            const values = part.map((s) => s.fields[name] ?? null);
            fields[name] = values.every((v) => typeof v === 'number') ? Float64Array.from(values) : values;
          }
          const first = part[0] as StoredSample;
          const bytes = packr.pack({ metric: first.metric, tags: first.tags, ts: Float64Array.from(part.map((s) => s.ts)), fields });
          for (let at = 0; at < bytes.length; at += this.sliceBytes) {
            res.write(bytes.subarray(at, at + this.sliceBytes));
            await new Promise((resolve) => setImmediate(resolve));
          }
        }
      }
      res.end();
      return;
    }
    if (url.pathname === '/v1/series') {
      const seen = new Map<string, { metric: string; tags: Record<string, string> }>();
      for (const s of this.store.values()) seen.set(key(s), { metric: s.metric, tags: s.tags });
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ series: [...seen.values()] }));
      return;
    }
    if (url.pathname === '/v1/admin/flush') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ objects: 1, series: 2, samples: this.store.size, bytes: 100 }));
      return;
    }
    if (url.pathname === '/readyz') {
      res.writeHead(200).end('ok');
      return;
    }
    res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { code: 'not_found', message: `no route ${url.pathname}` } }));
  }
}

/** Resolves once `condition` holds, checking it after every turn of the event loop (a wait on a condition, not a guess at a duration). */
export async function until(condition: () => boolean, what = 'condition', timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

function key(s: StoredSample): string {
  return `${s.metric}{${Object.entries(s.tags ?? {}).sort().map(([k, v]) => `${k}=${v}`).join(',')}}`;
}

async function readAll(req: IncomingMessage): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of req) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export function sample(i: number, metric = 'm'): { metric: string; tags: Record<string, string>; ts: number; fields: Record<string, number> } {
  return { metric, tags: { dev: `d${i % 3}` }, ts: 1_700_000_000_000 + i, fields: { value: i } };
}
