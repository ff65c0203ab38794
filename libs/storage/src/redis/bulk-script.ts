import { createHash } from 'node:crypto';
import { Command, type Cluster, type Redis } from 'ioredis';

/** Room kept in front of the arguments for the command's head (`*N`, name, sha, key), so the head is written in place. */
const HEAD_ROOM = 256;
/** Strings up to this long are tried as ASCII, bytes up to this many copied in a loop (RespArgs). */
const SHORT_TEXT = 256;
const SHORT_BYTES = 64;
// eslint-disable-next-line no-control-regex -- the ASCII range starts at NUL
const NOT_ASCII = /[^\x00-\x7f]/;

/**
 * The arguments of one command written straight into RESP bytes, as they are produced. An append
 * of a round of 40,000 series is 200,000 arguments: collected into an array first, ioredis'
 * Command flattened it, stringified each argument and wrote it again into a buffer, which with
 * our own pieces was three times the cost of reading the request they came from (cardinality
 * bench, Redis + S3: about 5 µs a sample on the HTTP thread). Here each argument is written once.
 * The bytes are those ioredis writes for the same arguments (property-tested).
 */
export class RespArgs {
  private buf: Buffer;
  private pos = HEAD_ROOM;
  /** Arguments written so far. */
  count = 0;

  constructor(sizeHint = 4096) {
    this.buf = Buffer.allocUnsafe(HEAD_ROOM + sizeHint);
  }

  private room(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** `$<n>\r\n`. */
  private header(n: number): void {
    const b = this.buf;
    let p = this.pos;
    b[p++] = 0x24;
    p = writeDigits(b, p, n);
    b[p++] = 13;
    b[p++] = 10;
    this.pos = p;
  }

  /** A string as UTF-8 (as ioredis sends a string argument). */
  text(s: string): void {
    // Series ids, metric names and series keys are short and nearly always ASCII, whose UTF-8 is
    // their Latin-1: written by length, without Buffer.byteLength (a second native call).
    if (s.length <= SHORT_TEXT && !NOT_ASCII.test(s)) {
      this.room(s.length + 16);
      this.header(s.length);
      this.pos += this.buf.write(s, this.pos, 'latin1');
      this.end();
      return;
    }
    const n = Buffer.byteLength(s);
    this.room(n + 16);
    this.header(n);
    this.pos += this.buf.write(s, this.pos);
    this.end();
  }

  /** The last safe integer number() wrote, as its whole argument (`$n\r\ndigits`): an append repeats its window. */
  private lastNumber = -1;
  private lastNumberBytes: Uint8Array = new Uint8Array(0);

  /** A number as its decimal text, as ioredis sends it (String(v); an integer beyond 2^53 exactly, as BigInt prints it). */
  number(v: number): void {
    if (!(Number.isSafeInteger(v) && v >= 0)) return this.text(Number.isInteger(v) && !Number.isSafeInteger(v) ? BigInt(v).toString() : String(v));
    if (v !== this.lastNumber) {
      const n = digitCount(v);
      this.room(n + 16);
      const start = this.pos;
      this.header(n);
      this.pos = writeDigits(this.buf, this.pos, v, n);
      this.lastNumber = v;
      this.lastNumberBytes = this.buf.subarray(start, this.pos);
      this.end();
      return;
    }
    this.room(this.lastNumberBytes.length + 2);
    this.copy(this.lastNumberBytes);
    this.end();
  }

  bytes(data: Uint8Array): void {
    this.room(data.length + 16);
    this.header(data.length);
    this.copy(data);
    this.end();
  }

  /** Bytes at pos: a loop for a few (a sample of one series), the native copy for more. */
  private copy(data: Uint8Array): void {
    const n = data.length;
    if (n <= SHORT_BYTES) {
      const b = this.buf;
      let p = this.pos;
      for (let i = 0; i < n; i++) b[p++] = data[i]!;
    } else this.buf.set(data, this.pos);
    this.pos += n;
  }

  private end(): void {
    this.buf[this.pos++] = 13;
    this.buf[this.pos++] = 10;
    this.count++;
  }

  /**
   * The whole command: `name`, then `head` (the script's sha or text, the key count, the key),
   * then the arguments written so far. Written into the room kept in front of them when it fits
   * (always for EVALSHA), else into a new buffer; the arguments are left as they are, so a
   * command can be made again with another head (EVAL after NOSCRIPT).
   */
  command(name: string, head: readonly (string | number)[]): Buffer {
    let text = `*${this.count + head.length + 1}\r\n$${name.length}\r\n${name}\r\n`;
    for (const h of head) {
      const s = String(h);
      text += `$${Buffer.byteLength(s)}\r\n${s}\r\n`;
    }
    const n = Buffer.byteLength(text);
    if (n <= HEAD_ROOM) {
      this.buf.write(text, HEAD_ROOM - n);
      return this.buf.subarray(HEAD_ROOM - n, this.pos);
    }
    return Buffer.concat([Buffer.from(text), this.buf.subarray(HEAD_ROOM, this.pos)]);
  }
}

function digitCount(v: number): number {
  let digits = 1;
  for (let x = v; x >= 10; x = Math.floor(x / 10)) digits++;
  return digits;
}

/** The decimal digits of a non-negative safe integer at b[p] (`digits` of them, when the caller counted); returns the end. */
function writeDigits(b: Buffer, p: number, v: number, digits = digitCount(v)): number {
  const end = p + digits;
  let at = end;
  for (let x = v; at > p; x = Math.floor(x / 10)) b[--at] = 48 + (x % 10);
  return end;
}

/**
 * A command sent as bytes made beforehand (RespArgs). Its arguments as ioredis sees them are the
 * head only: what a cluster client needs to find the key's slot.
 */
class PrebuiltCommand extends Command {
  constructor(
    name: string,
    head: (string | number)[],
    private readonly bytes: Buffer,
  ) {
    super(name, head);
  }

  override toWritable(): Buffer {
    return this.bytes;
  }
}

/**
 * A Lua script of one key whose calls carry many or large arguments, sent as EVALSHA in one
 * buffer (RespArgs). A server that does not know the script (restarted, SCRIPT FLUSH)
 * answers NOSCRIPT without running anything; the call is then sent once more as EVAL, which
 * loads it.
 */
export class BulkScript {
  private readonly sha: string;

  constructor(private readonly lua: string) {
    this.sha = createHash('sha1').update(lua).digest('hex');
  }

  async call(redis: Redis | Cluster, key: string, args: RespArgs): Promise<unknown> {
    const head = [this.sha, 1, key];
    try {
      return await redis.sendCommand(new PrebuiltCommand('evalsha', head, args.command('evalsha', head)));
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
      const evalHead = [this.lua, 1, key];
      return redis.sendCommand(new PrebuiltCommand('eval', evalHead, args.command('eval', evalHead)));
    }
  }
}
