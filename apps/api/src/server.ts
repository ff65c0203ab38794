import 'reflect-metadata';
import { Logger, type LogLevel } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { loadConfig, redactConfig, type RawEnv } from '@s4/config';
import { AppModule } from './app.module.js';
import { ApiKeyGuard } from './http/api-key.guard.js';
import { installBodyDecoding } from './http/body.js';
import { ErrorsFilter } from './http/errors.filter.js';
import { createRuntime, type Runtime } from './runtime.js';

export interface RunningServer {
  readonly url: string;
  readonly runtime: Runtime;
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

/** Start one S4 process (API and/or workers, by S4_ROLE) from an environment. */
export async function startServer(env: RawEnv = process.env): Promise<RunningServer> {
  const config = loadConfig(env);
  const runtime = await createRuntime(config);
  const adapter = new FastifyAdapter({ bodyLimit: config.limits.maxBodyBytes, keepAliveTimeout: 65_000, requestTimeout: config.limits.requestTimeoutMs });
  const app = await NestFactory.create<NestFastifyApplication>(AppModule.forRuntime(runtime), adapter, { logger: NEST_LEVELS[config.logLevel] ?? NEST_LEVELS.info!, bodyParser: false });
  const fastify = app.getHttpAdapter().getInstance();
  installBodyDecoding(fastify, config.limits);
  app.useGlobalFilters(new ErrorsFilter(config.limits.maxBodyBytes));
  app.useGlobalGuards(new ApiKeyGuard(config.apiKeys));
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder().setTitle('S4').setDescription('S3-first time-series store').setVersion('0.1.0').addBearerAuth().addSecurityRequirements('bearer').build(),
  );
  fastify.get('/openapi.json', async () => document);
  app.enableShutdownHooks();
  await app.listen(config.port, config.host);
  const address = fastify.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://${config.host === '0.0.0.0' ? '127.0.0.1' : config.host}:${port}`;
  new Logger('s4').log(`listening on ${url} as role ${config.role}; config ${JSON.stringify(redactConfig(config))}`);
  return {
    url,
    runtime,
    async close() {
      await app.close();
      await runtime.close();
    },
  };
}
