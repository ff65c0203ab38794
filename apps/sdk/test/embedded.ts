// Starts the real S4 server (@s4/api, embedded mode) for integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer } from '@s4/api';

export interface Embedded {
  url: string;
  port: number;
  dataDir: string;
  close(): Promise<void>;
}



/** A fresh embedded server on a random port (or `port`), data in a temp dir (or `dataDir`). */
export async function startEmbedded(options: { dataDir?: string; port?: number } = {}): Promise<Embedded> {
  const dataDir = options.dataDir ?? mkdtempSync(join(tmpdir(), 's4-test-'));
  const env = { S4_DATA_DIR: dataDir, S4_PORT: String(options.port ?? 0), S4_HOST: '127.0.0.1', S4_LOG_LEVEL: 'silent', S4_EMBEDDED_FSYNC: 'never' };
  let lastError: unknown;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      const server = await startServer(env);
      const port = Number(new URL(server.url).port);
      return { url: server.url, port, dataDir, close: () => server.close() };
    } catch (error) {
      lastError = error; // the port of a just-closed server can take a moment to free up
      if (!String((error as { code?: string }).code ?? (error as Error).message).includes('EADDRINUSE')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  throw lastError;
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
