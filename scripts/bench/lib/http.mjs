// One HTTP client for both systems: node:http with a keep-alive agent, whole body as a Buffer.
import http from 'node:http';

export function agent(maxSockets = 64) {
  return new http.Agent({ keepAlive: true, maxSockets, keepAliveMsecs: 10_000 });
}

const shared = agent(64);

/**
 * @param {string} url
 * @param {{method?:string, body?:Buffer|string, headers?:Record<string,string>, agent?:http.Agent}} [o]
 * @returns {Promise<{status:number, headers:http.IncomingHttpHeaders, body:Buffer}>}
 */
export function request(url, o = {}) {
  return new Promise((resolve, reject) => {
    const body = o.body === undefined ? undefined : typeof o.body === 'string' ? Buffer.from(o.body) : o.body;
    const headers = { ...(o.headers ?? {}) };
    if (body) headers['content-length'] = String(body.length);
    const req = http.request(url, { method: o.method ?? (body ? 'POST' : 'GET'), headers, agent: o.agent ?? shared }, (res) => {
      const chunks = [];
      res.on('data', (c) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    if (body) req.end(body);
    else req.end();
  });
}

/** request() that throws unless the status is 2xx. */
export async function ok(url, o = {}) {
  const r = await request(url, o);
  if (r.status < 200 || r.status >= 300) throw new HttpError(r.status, `${o.method ?? (o.body ? 'POST' : 'GET')} ${url.slice(0, 200)} → ${r.status}: ${r.body.toString().slice(0, 500)}`);
  return r;
}

export class HttpError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

export async function waitHttp(url, timeoutMs = 30_000, isUp = (r) => r.status === 200) {
  const end = Date.now() + timeoutMs;
  let last;
  while (Date.now() < end) {
    try {
      const r = await request(url);
      if (isUp(r)) return;
      last = `status ${r.status}`;
    } catch (e) {
      last = e.message;
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${url} not up after ${timeoutMs} ms (${last})`);
}

/** Run `fn(item)` over items with at most `limit` in flight; results in order. */
export async function mapLimit(items, limit, fn) {
  const out = new Array(items.length);
  let next = 0;
  const workers = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  });
  await Promise.all(workers);
  return out;
}
