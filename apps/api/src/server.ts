import 'reflect-metadata';
import { Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { loadConfig, redactConfig, type Config, type RawEnv } from '@s4/config';
import { AppModule } from './app.module.js';
import type { S4Error } from '@s4/core';
import { KeyRing } from './auth/keys.js';
import { ApiKeyGuard } from './http/api-key.guard.js';
import { installSecurityHeaders } from './http/security.js';
import { installConsole, loadConsole } from './http/console.js';
import { installBodyDecoding } from './http/body.js';
import { ErrorsFilter } from './http/errors.filter.js';
import { startRoles, type ProcessRoles } from './roles/process.js';
import { Ingest } from './roles/api/ingest.js';
import { installPrecedence } from './http/precedence.js';
import { WRITE_OPERATION, installWriteRoute } from './roles/api/write.route.js';

export interface RunningServer {
  readonly url: string;
  /** What this process runs, by role and thread (see roles/README.md). */
  readonly roles: ProcessRoles;
  /** Stop serving HTTP, stop the role threads (each finishes its running pass), close the stores. */
  close(): Promise<void>;
}

const NEST_LEVELS: Record<string, LogLevel[]> = {
  silent: [],
  fatal: ['fatal'],
  error: ['fatal', 'error'],
  warn: ['fatal', 'error', 'warn'],
  info: ['fatal', 'error', 'warn', 'log'],
  debug: ['fatal', 'error', 'warn', 'log', 'debug'],
  trace: ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'],
};

/**
 * Start one S4 process from an environment: the roles S4_ROLE names (the API on this thread, the
 * segment and aggregate roles in worker threads) and the HTTP server (every role answers
 * /healthz, /readyz and /metrics).
 */
export async function startServer(env: RawEnv = process.env): Promise<RunningServer> {
  const config = loadConfig(env);
  const levels = NEST_LEVELS[config.logLevel] ?? NEST_LEVELS.info!;
  Logger.overrideLogger(levels);
  const roles = await startRoles(config);
  try {
    return await listen(config, roles, levels);
  } catch (e) {
    await roles.close().catch(() => undefined);
    throw e;
  }
}

async function listen(config: Config, roles: ProcessRoles, levels: LogLevel[]): Promise<RunningServer> {
  const adapter = new FastifyAdapter({ bodyLimit: config.limits.maxBodyBytes, keepAliveTimeout: 65_000, requestTimeout: config.limits.requestTimeoutMs });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forProcess(roles), adapter, { logger: levels, bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance();
  installBodyDecoding(fastify, config.limits);
  app.useGlobalFilters(new ErrorsFilter(config.limits.maxBodyBytes));
  const guard = new ApiKeyGuard({ keys: KeyRing.load(config.apiKeys, config.apiKeysFile), namespace: config.namespace, publicMetrics: config.publicMetrics });
  app.useGlobalGuards(guard);
  installSecurityHeaders(fastify);
  installPrecedence(fastify);
  if (roles.api) {
    installConsole(fastify, loadConsole());
    installWriteRoute(fastify, app.get(Ingest), guard);
  }
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle('S4').setDescription('S3-first time-series store').setVersion('0.1.0').addBearerAuth().addSecurityRequirements('bearer').build(),
  );
  if (roles.api) document.paths['/v1/write'] = { post: WRITE_OPERATION };
  fastify.get('/openapi.json', async (req, reply) => {
    try {
      guard.authorize(req.url, req.headers.authorization);
    } catch (e) {
      const err = e as S4Error;
      return reply.status(err.status).send({ error: { code: err.code, message: err.message } });
    }
    return document;
  });
  // No enableShutdownHooks(): main.ts handles SIGTERM/SIGINT with close(), which must finish
  // stopping the role threads; Nest's hook would re-raise the signal and end the process first.
  try {
    await app.listen(config.port, config.host);
  } catch (e) {
    await app.close().catch(() => undefined);
    throw e;
  }
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  new Logger('s4').log(`listening on ${url} as role ${config.role}; config ${JSON.stringify(redactConfig(config))}`);
  return {
    url,
    roles,
    async close() {
      // In-flight requests finish (an admin flush included); a keep-alive connection that goes idle
      // meanwhile is closed at once instead of holding the close for the 65 s keep-alive timeout.
      const idle = setInterval(() => fastify.server.closeIdleConnections(), 100);
      try {
        await app.close();
      } finally {
        clearInterval(idle);
      }
      await roles.close();
    },
  };
}
