import { ConfigError, loadConfig } from '@s4/config';
import { tuneRuntime } from './runtime.js';

/** `npm start`: one S4 process configured from the environment; stops cleanly on SIGTERM/SIGINT. */
try {
  // Validated first, so a bad setting is reported once, before the process re-executes itself.
  tuneRuntime(loadConfig(process.env).runtimeTuning, process.env);
  const { startServer } = await import('./server.js');
  const server = await startServer(process.env);
  const stop = (signal: string) => {
    process.stderr.write(`s4: ${signal}, shutting down\n`);
    server.close().then(
      () => process.exit(0),
      (e: unknown) => {
        process.stderr.write(`s4: shutdown failed: ${String(e)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
} catch (e) {
  process.stderr.write(e instanceof ConfigError ? `s4: ${e.message}\n` : `s4: cannot start: ${(e as Error).stack ?? String(e)}\n`);
  process.exit(1);
}
