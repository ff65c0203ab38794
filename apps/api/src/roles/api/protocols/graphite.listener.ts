import { createServer, type Server, type Socket } from 'node:net';
import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import type { Sample } from '@s4/core';
import type { Config } from '@s4/config';
import { parseGraphiteLine } from '@s4/format';
import { CONFIG } from '../../../http/tokens.js';
import { Ingest } from '../ingest.js';

/** carbon-c-relay's default limit of a line (metric + value + timestamp + newline). */
const MAX_LINE = 32_768;
/** A connection's points go to the write seam every this many points or this often, whichever first. */
const BATCH_POINTS = 5_000;
const BATCH_MS = 1_000;

/**
 * Graphite's plaintext protocol on TCP (S4_GRAPHITE_PORT; off when unset). Each connection's
 * lines are parsed (libs/format parseGraphiteLine) and written through the same seam as
 * /v1/write, in batches; while a batch is being written the connection is paused, so a slow
 * store slows senders down instead of filling memory. The protocol has no replies: bad lines
 * are counted and logged (at most every 10 s), a write the store refuses is logged, and an
 * over-long line, an idle connection or one over the connection limit is closed. Graphite
 * never acknowledges, so a sender cannot know what was stored: use /v1/write or remote write
 * where that matters.
 */
@Injectable()
export class GraphiteListener implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly log = new Logger('graphite');
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private lastLogged = -Infinity;
  /** Lines refused since the process started (logged with the latest reason). */
  rejected = 0;

  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(Ingest) private readonly ingest: Ingest,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const g = this.config.graphite;
    if (!g) return;
    const server = createServer((socket) => this.serve(socket));
    server.maxConnections = g.maxConnections;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(g.port, g.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    // After listen, an error (e.g. EMFILE while accepting) is the listener's, not the process's:
    // with no listener Node would end the process and every write in flight with it.
    server.on('error', (e: Error) => this.log.error(`Graphite listener: ${e.message}`));
    this.server = server;
    this.log.log(`Graphite plaintext listener on ${g.host}:${g.port}`);
  }

  async onApplicationShutdown(): Promise<void> {
    const server = this.server;
    if (!server) return;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    // Each connection writes what it has read, then ends.
    for (const s of this.sockets) s.end();
    await closed;
  }

  private serve(socket: Socket): void {
    this.sockets.add(socket);
    socket.setTimeout(this.config.graphite!.idleTimeoutMs, () => socket.destroy());
    socket.setEncoding('utf8');
    let pending = '';
    let batch: Sample[] = [];
    let writing: Promise<void> = Promise.resolve();
    let timer: NodeJS.Timeout | undefined;

    const flush = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (batch.length === 0) return writing;
      const samples = batch;
      batch = [];
      socket.pause();
      writing = writing
        .then(() => this.ingest.write({ kind: 'json', body: { samples } }))
        .then(
          () => undefined,
          (e: unknown) => this.reject(`a batch of ${samples.length} points was not stored: ${(e as Error).message}`, samples.length),
        )
        .finally(() => socket.resume());
      return writing;
    };

    socket.on('data', (chunk: string) => {
      pending += chunk;
      let nl: number;
      while ((nl = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, nl);
        pending = pending.slice(nl + 1);
        if (line.trim() === '') continue;
        const parsed = parseGraphiteLine(line, this.ingest.now());
        if (typeof parsed === 'string') this.reject(`${parsed}: ${JSON.stringify(line.slice(0, 200))}`, 1);
        else batch.push(parsed);
        if (batch.length >= BATCH_POINTS) void flush();
      }
      if (pending.length > MAX_LINE) {
        this.reject(`a line longer than ${MAX_LINE} bytes; connection closed`, 1);
        socket.destroy();
        return;
      }
      if (batch.length > 0 && !timer) timer = setTimeout(() => void flush(), BATCH_MS);
    });
    socket.on('end', () => {
      if (pending.trim() !== '') {
        const parsed = parseGraphiteLine(pending, this.ingest.now());
        if (typeof parsed === 'string') this.reject(parsed, 1);
        else batch.push(parsed);
      }
      void flush().finally(() => socket.end());
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      // Closed by the sender, an error or the idle timeout: what was read is still written.
      void flush();
      this.sockets.delete(socket);
    });
  }

  private reject(why: string, lines: number): void {
    this.rejected += lines;
    const now = Date.now();
    if (now - this.lastLogged < 10_000) return;
    this.lastLogged = now;
    this.log.warn(`refused Graphite input (${this.rejected} lines so far): ${why}`);
  }
}
