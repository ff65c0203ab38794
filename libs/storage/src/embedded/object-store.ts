import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { randomUUID } from 'node:crypto';
import { PreconditionFailedError, type GetOptions, type GetResult, type ObjectInfo, type ObjectStore, type PutCondition } from '@s4/core';

/**
 * Object store on a local directory: one file per key. Writes go to a temporary file, are
 * fsynced and renamed into place, so a reader sees the old object or the new one, never a part.
 * The ETag is derived from inode, size and mtime, which every rename changes. Conditional writes
 * are atomic within this process, which owns the directory.
 */
export class FilesystemObjectStore implements ObjectStore {
  private readonly locks = new Map<string, Promise<void>>();

  constructor(private readonly root: string) {}

  private path(key: string): string {
    if (key.includes('..') || key.startsWith('/')) throw new Error(`object key ${key} escapes the store`);
    return join(this.root, ...key.split('/'));
  }

  async put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }> {
    return this.locked(key, async () => {
      const path = this.path(key);
      if (condition) {
        const current = await this.head(key);
        if (condition.ifNoneMatch === '*' && current) throw new PreconditionFailedError(key);
        if (condition.ifMatch !== undefined && current?.etag !== condition.ifMatch) throw new PreconditionFailedError(key);
      }
      await mkdir(dirname(path), { recursive: true });
      const tmp = join(this.root, '.tmp', randomUUID());
      await mkdir(dirname(tmp), { recursive: true });
      const fh = await open(tmp, 'w');
      try {
        await fh.writeFile(body);
        await fh.datasync();
      } finally {
        await fh.close();
      }
      await rename(tmp, path);
      const info = await this.head(key);
      return { etag: info!.etag };
    });
  }

  async get(key: string, options?: GetOptions): Promise<GetResult | null> {
    const path = this.path(key);
    let fh;
    try {
      fh = await open(path, 'r');
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
    try {
      const st = await fh.stat();
      if (st.isDirectory()) return null;
      const etag = etagOf(st);
      if (options?.ifNoneMatch === etag) return { notModified: true, etag };
      const offset = options?.range?.offset ?? 0;
      const length = Math.max(0, Math.min(options?.range?.length ?? st.size, st.size - offset));
      const body = new Uint8Array(length);
      let read = 0;
      while (read < length) {
        const { bytesRead } = await fh.read(body, read, length - read, offset + read);
        if (bytesRead === 0) break;
        read += bytesRead;
      }
      return { notModified: false, body, etag, size: st.size };
    } finally {
      await fh.close();
    }
  }

  async head(key: string): Promise<{ size: number; etag: string } | null> {
    try {
      const st = await stat(this.path(key));
      return st.isFile() ? { size: st.size, etag: etagOf(st) } : null;
    } catch (e) {
      if (isNotFound(e)) return null;
      throw e;
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const found: ObjectInfo[] = [];
    const walk = async (dir: string): Promise<void> => {
      let entries;
      try {
        entries = await readdir(dir, { withFileTypes: true });
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      for (const ent of entries) {
        const full = join(dir, ent.name);
        const key = relative(this.root, full).split(sep).join('/');
        if (key.startsWith('.tmp')) continue;
        if (ent.isDirectory()) {
          if (prefix.startsWith(`${key}/`) || key.startsWith(prefix) || `${key}/`.startsWith(prefix)) await walk(full);
        } else if (key.startsWith(prefix)) {
          found.push({ key, size: (await stat(full)).size });
        }
      }
    };
    await walk(this.root);
    found.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
    yield* found;
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (const key of keys) await rm(this.path(key), { force: true });
  }

  async close(): Promise<void> {}

  /** Serialises writers of one key, so check-then-write of a condition is atomic. */
  private async locked<T>(key: string, fn: () => Promise<T>): Promise<T> {
    const prev = this.locks.get(key) ?? Promise.resolve();
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const chained = prev.then(() => next);
    this.locks.set(key, chained);
    await prev;
    try {
      return await fn();
    } finally {
      release();
      if (this.locks.get(key) === chained) this.locks.delete(key);
    }
  }
}

function etagOf(st: { ino: number; size: number; mtimeMs: number }): string {
  return `"${st.ino.toString(16)}-${st.size.toString(16)}-${Math.round(st.mtimeMs * 1000).toString(16)}"`;
}

function isNotFound(e: unknown): boolean {
  const code = (e as { code?: string }).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

