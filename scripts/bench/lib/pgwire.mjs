// A minimal PostgreSQL client for the bench (frontend/backend protocol 3.0 over TCP): startup with
// trust authentication, the simple query protocol with rows handed to a callback as text, and
// COPY FROM STDIN. No dependency, so the bench needs nothing beyond the repo's own packages; it
// decodes like the `pg` package does (each value as a UTF-8 string, jsonb then JSON.parse'd by
// the caller) and keeps one connection open per client, as a pool would.
import net from 'node:net';

export class PgError extends Error {
  constructor(fields) {
    super(`${fields.S ?? 'ERROR'} ${fields.C ?? ''}: ${fields.M ?? 'unknown error'}${fields.D ? ` (${fields.D})` : ''}`);
    this.fields = fields;
  }
}

function cstr(s) {
  return Buffer.concat([Buffer.from(s, 'utf8'), Buffer.from([0])]);
}

function message(type, body) {
  const head = Buffer.alloc(5);
  head[0] = type.charCodeAt(0);
  head.writeInt32BE(body.length + 4, 1);
  return Buffer.concat([head, body]);
}

export class PgConn {
  /** @param {{host?:string, port:number, user?:string, database?:string}} o */
  static connect(o) {
    return new Promise((resolve, reject) => {
      const sock = net.connect({ host: o.host ?? '127.0.0.1', port: o.port });
      sock.setNoDelay(true);
      const c = new PgConn(sock);
      c.pending = { onRow: null, resolve: () => resolve(c), reject, rows: 0, tag: null, error: null, startup: true };
      sock.once('error', reject);
      sock.on('connect', () => {
        const params = Buffer.concat([cstr('user'), cstr(o.user ?? 'postgres'), cstr('database'), cstr(o.database ?? 'postgres'), cstr('client_encoding'), cstr('UTF8'), Buffer.from([0])]);
        const ver = Buffer.alloc(4);
        ver.writeInt32BE(196608, 0);
        const body = Buffer.concat([ver, params]);
        const len = Buffer.alloc(4);
        len.writeInt32BE(body.length + 4, 0);
        sock.write(Buffer.concat([len, body]));
      });
    });
  }

  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.pending = null;
    this.queue = Promise.resolve();
    this.copyData = null;
    sock.on('data', (d) => this.#onData(d));
    sock.on('error', (e) => this.#fail(e));
    sock.on('close', () => this.#fail(new Error('PostgreSQL connection closed')));
  }

  #fail(e) {
    const p = this.pending;
    this.pending = null;
    if (p) p.reject(e);
  }

  #onData(d) {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let off = 0;
    const b = this.buf;
    while (b.length - off >= 5) {
      const len = b.readInt32BE(off + 1);
      if (b.length - off < len + 1) break;
      this.#handle(b[off], b, off + 5, off + 1 + len);
      off += len + 1;
    }
    this.buf = off === b.length ? Buffer.alloc(0) : b.subarray(off);
  }

  #handle(type, b, s, e) {
    const p = this.pending;
    switch (type) {
      case 0x44: {
        // DataRow
        if (!p?.onRow) {
          if (p) p.rows++;
          return;
        }
        const n = b.readInt16BE(s);
        const vals = new Array(n);
        let o = s + 2;
        for (let i = 0; i < n; i++) {
          const l = b.readInt32BE(o);
          o += 4;
          if (l < 0) vals[i] = null;
          else {
            vals[i] = b.toString('utf8', o, o + l);
            o += l;
          }
        }
        p.rows++;
        p.onRow(vals);
        return;
      }
      case 0x43: // CommandComplete
        if (p) p.tag = b.toString('utf8', s, e - 1);
        return;
      case 0x45: {
        // ErrorResponse
        const fields = {};
        let o = s;
        while (o < e && b[o] !== 0) {
          const k = String.fromCharCode(b[o]);
          const z = b.indexOf(0, o + 1);
          fields[k] = b.toString('utf8', o + 1, z);
          o = z + 1;
        }
        if (p) p.error = new PgError(fields);
        if (p?.startup) {
          this.pending = null;
          p.reject(p.error);
        }
        return;
      }
      case 0x52: {
        // Authentication
        const code = b.readInt32BE(s);
        if (code !== 0 && p) {
          this.pending = null;
          p.reject(new Error(`PostgreSQL asks for authentication method ${code}; the bench cluster uses trust`));
        }
        return;
      }
      case 0x47: // CopyInResponse: send the data, then CopyDone
        this.sock.write(message('d', this.copyData ?? Buffer.alloc(0)));
        this.sock.write(message('c', Buffer.alloc(0)));
        this.copyData = null;
        return;
      case 0x5a: // ReadyForQuery
        this.pending = null;
        if (p) {
          if (p.error) p.reject(p.error);
          else p.resolve({ rows: p.rows, tag: p.tag });
        }
        return;
      default:
        // ParameterStatus, BackendKeyData, RowDescription, NoticeResponse, EmptyQueryResponse, …
        return;
    }
  }

  /**
   * Simple-query protocol; rows (arrays of text or null) go to onRow as they arrive.
   * @returns {Promise<{rows:number, tag:string|null}>}
   */
  query(sql, onRow = null) {
    const run = () =>
      new Promise((resolve, reject) => {
        this.pending = { onRow, resolve, reject, rows: 0, tag: null, error: null };
        this.sock.write(message('Q', cstr(sql)));
      });
    const r = this.queue.then(run, run);
    this.queue = r.catch(() => {});
    return r;
  }

  /** All rows as arrays of text. */
  async rows(sql) {
    const out = [];
    await this.query(sql, (v) => out.push(v));
    return out;
  }

  /** COPY … FROM STDIN with `data` (text format) as one CopyData message. */
  copyIn(sql, data) {
    const run = () =>
      new Promise((resolve, reject) => {
        this.copyData = data;
        this.pending = { onRow: null, resolve, reject, rows: 0, tag: null, error: null };
        this.sock.write(message('Q', cstr(sql)));
      });
    const r = this.queue.then(run, run);
    this.queue = r.catch(() => {});
    return r;
  }

  end() {
    try {
      this.sock.end(message('X', Buffer.alloc(0)));
    } catch {
      // already closed
    }
  }
}

/** A literal for SQL text: 'it''s'. */
export function lit(s) {
  return `'${String(s).replaceAll("'", "''")}'`;
}

/** Escapes a value for COPY text format (backslash, tab, newline, carriage return). */
export function copyText(s) {
  return /[\\\t\n\r]/.test(s) ? s.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r')) : s;
}
