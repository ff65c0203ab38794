import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './s4-process.js';
import { tempDir } from './servers.js';

/**
 * Redis and S3 servers of one test file only, so it can freeze (SIGSTOP), kill and restart them
 * without disturbing the shared servers other suites use at the same time. Launched the way
 * scripts/services/*.sh launch theirs (same binaries, same flags), on free ports.
 */
abstract class PrivateServer {
  protected child: ChildProcess | null = null;
  private stderr = '';

  protected constructor(readonly port: number) {}

  protected abstract command(): [string, string[]];
  protected abstract ready(): Promise<boolean>;

  async start(): Promise<void> {
    const [bin, args] = this.command();
    const child = spawn(bin, args, { stdio: ['ignore', 'ignore', 'pipe'] });
    this.child = child;
    child.stderr.on('data', (d: Buffer) => (this.stderr += d.toString()));
    live.add(child);
    child.once('exit', () => live.delete(child));
    const deadline = Date.now() + 20_000;
    while (Date.now() < deadline) {
      if (child.exitCode !== null) throw new Error(`${bin} exited with ${child.exitCode}: ${this.stderr}`);
      if (await this.ready()) return;
      await sleep(50);
    }
    throw new Error(`${bin} on port ${this.port} not ready after 20 s: ${this.stderr}`);
  }

  /** SIGSTOP: the process holds its sockets but answers nothing, like a hung server or a partition. */
  freeze(): void {
    this.child?.kill('SIGSTOP');
  }

  thaw(): void {
    this.child?.kill('SIGCONT');
  }

  /** SIGKILL: a crash; data on disk stays for the next start. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGCONT');
    child.kill('SIGKILL');
    await exited;
  }
}

const live = new Set<ChildProcess>();
// A failed run must not leave servers behind: they are children of this test process only.
process.once('exit', () => {
  for (const c of live) c.kill('SIGKILL');
});

/** redis-server with AOF (appendfsync everysec), as scripts/services/redis.sh runs it. */
export class PrivateRedis extends PrivateServer {
  readonly dir = tempDir('redis');

  private constructor(port: number) {
    super(port);
  }

  static async start(): Promise<PrivateRedis> {
    const r = new PrivateRedis(await freePort());
    await r.start();
    return r;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  protected command(): [string, string[]] {
    const args = ['--bind', '127.0.0.1', '--port', String(this.port), '--dir', this.dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--daemonize', 'no'];
    return ['redis-server', args];
  }

  protected async ready(): Promise<boolean> {
    return (await this.command1('PING')).startsWith('+PONG');
  }

  /** One inline command over a fresh connection; the raw reply ('' when the server does not answer). */
  async command1(...words: string[]): Promise<string> {
    return new Promise((resolve) => {
      const socket = connect(this.port, '127.0.0.1');
      let reply = '';
      const done = () => {
        socket.destroy();
        resolve(reply);
      };
      socket.setTimeout(1_000, done);
      socket.on('error', done);
      socket.on('connect', () => socket.write(`${words.join(' ')}\r\n`));
      socket.on('data', (d: Buffer) => {
        reply += d.toString();
        if (reply.endsWith('\r\n')) done();
      });
    });
  }
}

/** versitygw (posix backend) built by scripts/services/s3.sh, with the same test credentials. */
export class PrivateS3 extends PrivateServer {
  readonly dir = tempDir('s3');
  static readonly accessKey = process.env.AWS_ACCESS_KEY_ID ?? 's4test';
  static readonly secretKey = process.env.AWS_SECRET_ACCESS_KEY ?? 's4testsecret';
  static readonly region = process.env.AWS_REGION ?? 'us-east-1';

  private constructor(port: number) {
    super(port);
  }

  static async start(): Promise<PrivateS3> {
    const s = new PrivateS3(await freePort());
    await s.start();
    return s;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  protected command(): [string, string[]] {
    const cache = process.env.S4_SERVICES_CACHE ?? join(homedir(), '.cache', 's4-services');
    const bin = join(cache, `versitygw-${process.env.S4_VERSITYGW_VERSION ?? 'v1.8.0'}`, 'versitygw');
    if (!existsSync(bin)) throw new Error(`${bin} is missing: run scripts/services/s3.sh start once to build it`);
    const { accessKey, secretKey, region } = PrivateS3;
    return [bin, ['--port', `127.0.0.1:${this.port}`, '--access', accessKey, '--secret', secretKey, '--region', region, '--quiet', '--health', '/health', 'posix', this.dir]];
  }

  protected async ready(): Promise<boolean> {
    try {
      return (await fetch(`${this.endpoint}/health`, { signal: AbortSignal.timeout(1_000) })).ok;
    } catch {
      return false;
    }
  }
}

/**
 * A TCP proxy in front of a server that can swallow new connections: a swallowed connection is
 * accepted and then never answered (nor forwarded), like a request lost on one bad path while
 * the next connection works.
 */
export class StallingProxy {
  private swallowNext = 0;
  private readonly sockets = new Set<Socket>();
  private readonly server: Server;
  /** Connections swallowed so far, and how many of them the client has since closed. */
  readonly swallowed: Socket[] = [];
  closedByClient = 0;

  private constructor(
    targetPort: number,
    readonly port: number,
  ) {
    this.server = createServer((client) => {
      this.sockets.add(client);
      client.once('close', () => this.sockets.delete(client));
      if (this.swallowNext > 0) {
        this.swallowNext--;
        this.swallowed.push(client);
        client.on('error', () => undefined);
        // Read and drop what arrives, or the end of the stream (the client giving up) goes unseen.
        client.resume();
        client.once('close', () => this.closedByClient++);
        return;
      }
      const upstream = connect(targetPort, '127.0.0.1');
      client.pipe(upstream).pipe(client);
      const drop = () => {
        client.destroy();
        upstream.destroy();
      };
      client.on('error', drop);
      upstream.on('error', drop);
      client.on('close', drop);
      upstream.on('close', drop);
    });
  }

  static async start(targetPort: number): Promise<StallingProxy> {
    const proxy = new StallingProxy(targetPort, await freePort());
    await new Promise<void>((resolve) => proxy.server.listen(proxy.port, '127.0.0.1', resolve));
    return proxy;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  swallow(connections: number): void {
    this.swallowNext = connections;
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise((r) => this.server.close(r));
  }
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
