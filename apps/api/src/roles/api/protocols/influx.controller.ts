import { Controller, Get, Inject, Post, Query, Req, Res } from '@nestjs/common';
import { ApiConsumes, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { S4Error, UnavailableError, ValidationError } from '@s4/core';
import type { Config } from '@s4/config';
import { parseLineProtocol, type Precision } from '@s4/format';
import { CONFIG } from '../../../http/tokens.js';
import { Ingest } from '../ingest.js';
import { ERROR_SCHEMA } from '../openapi.js';
import { remapIssues } from './issues.js';

/** Influx 1.x precisions (n, u, m and h included) and 2.x's, as S4 reads them. */
const V1_PRECISION = new Map<string, Precision>([
  ['n', 'ns'],
  ['ns', 'ns'],
  ['u', 'us'],
  ['us', 'us'],
  ['µ', 'us'],
  ['ms', 'ms'],
  ['s', 's'],
  ['m', 'm'],
  ['h', 'h'],
]);
const V2_PRECISION = new Set<string>(['ns', 'us', 'ms', 's']);

const VERSION = 's4-0.1.0';

type Flavor = 'v1' | 'v2';

/**
 * InfluxDB's write endpoints: 1.x `POST /write?db=` and 2.x `POST /api/v2/write?bucket=`, with
 * `/ping` for the clients that check the server first. The database or bucket names the
 * namespace (this process serves one, S4_NAMESPACE); a line is one sample of one series with all
 * its fields. Errors come in the shape each client reads: 1.x `{"error": "..."}`, 2.x
 * `{"code": "invalid", "message": "..."}`, both beside S4's own `error` details where they fit.
 */
@ApiTags('influx')
@Controller()
export class InfluxController {
  constructor(
    @Inject(CONFIG) private readonly config: Config,
    @Inject(Ingest) private readonly ingest: Ingest,
  ) {}

  @Get('ping')
  @ApiOperation({ summary: 'Influx clients\' liveness check (no key needed; HEAD too)' })
  @ApiResponse({ status: 204, description: 'Up; X-Influxdb-Version names S4' })
  async ping(@Res() reply: FastifyReply): Promise<void> {
    await reply.status(204).header('x-influxdb-version', VERSION).send();
  }

  @Post('write')
  @ApiOperation({ summary: 'InfluxDB 1.x line-protocol write', description: 'Body: line protocol (text/plain or no Content-Type; gzip allowed). db names the namespace. 204 once every point is durable; nothing is written if any line is bad.' })
  @ApiConsumes('text/plain')
  @ApiQuery({ name: 'db', required: true, description: 'the namespace this server serves (S4_NAMESPACE)' })
  @ApiQuery({ name: 'precision', required: false, enum: ['n', 'ns', 'u', 'us', 'ms', 's', 'm', 'h'], description: 'timestamp unit (default ns)' })
  @ApiQuery({ name: 'rp', required: false, description: 'ignored (retention comes from the namespace)' })
  @ApiResponse({ status: 204, description: 'Every point is durable' })
  @ApiResponse({ status: 400, description: '{"error": "line 3, column 9: ..."}; nothing was written' })
  @ApiResponse({ status: 404, description: 'db is not this server\'s namespace' })
  async writeV1(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Query('db') db?: string, @Query('precision') precision?: string): Promise<void> {
    await this.write(req, reply, 'v1', db, precision);
  }

  @Post('api/v2/write')
  @ApiOperation({ summary: 'InfluxDB 2.x line-protocol write', description: 'Body: line protocol (gzip allowed). bucket names the namespace; org is accepted and ignored. Key: Authorization: Token <key> (or Bearer).' })
  @ApiConsumes('text/plain')
  @ApiQuery({ name: 'bucket', required: true, description: 'the namespace this server serves (S4_NAMESPACE)' })
  @ApiQuery({ name: 'org', required: false, description: 'ignored' })
  @ApiQuery({ name: 'precision', required: false, enum: ['ns', 'us', 'ms', 's'], description: 'timestamp unit (default ns)' })
  @ApiResponse({ status: 204, description: 'Every point is durable' })
  @ApiResponse({ status: 400, description: '{"code": "invalid", "message": "line 3, column 9: ..."}; nothing was written', schema: ERROR_SCHEMA })
  @ApiResponse({ status: 404, description: 'bucket is not this server\'s namespace' })
  async writeV2(@Req() req: FastifyRequest, @Res() reply: FastifyReply, @Query('bucket') bucket?: string, @Query('precision') precision?: string): Promise<void> {
    await this.write(req, reply, 'v2', bucket, precision);
  }

  private async write(req: FastifyRequest, reply: FastifyReply, flavor: Flavor, db: string | undefined, precisionParam: string | undefined): Promise<void> {
    try {
      const what = flavor === 'v1' ? 'db' : 'bucket';
      if (!db) throw new S4Error('invalid_request', `${what} is required: name the namespace this server serves (${this.config.namespace})`, 400);
      if (db !== this.config.namespace)
        throw new S4Error('not_found', `${flavor === 'v1' ? 'database' : 'bucket'} ${JSON.stringify(db)} not found: this server stores namespace ${JSON.stringify(this.config.namespace)}`, 404);
      const p = flavor === 'v1' ? V1_PRECISION.get(precisionParam ?? 'ns') : V2_PRECISION.has(precisionParam ?? 'ns') ? ((precisionParam ?? 'ns') as Precision) : undefined;
      if (!p) throw new S4Error('invalid_request', `precision ${JSON.stringify(precisionParam)} is not one of ${flavor === 'v1' ? [...V1_PRECISION.keys()].join(', ') : [...V2_PRECISION].join(', ')}`, 400);
      // A body another parser read (JSON, MessagePack, a form) is not line protocol.
      if (req.body !== undefined && typeof req.body !== 'string') throw new S4Error('unsupported_media_type', `Content-Type ${req.headers['content-type'] ?? '(none)'} is not line protocol; send text/plain (or no Content-Type)`, 415);
      const text = req.body ?? '';
      const now = this.ingest.now();
      // Columns per series: the validator checks a column far faster than an object per line.
      const parsed = parseLineProtocol(text, { precision: p, now, columns: true });
      if (parsed.issues.length > 0) throw new ValidationError(parsed.issues.map((i) => ({ path: `line ${i.line}, column ${i.column}`, message: i.message })));
      if (parsed.series.length === 0) {
        // Influx accepts an empty body as a no-op write.
        await reply.status(204).send();
        return;
      }
      const grouped = parsed.series;
      const series = grouped.map(({ metric, tags, ts, fields }) => ({ metric, tags, ts, fields }));
      try {
        await this.ingest.write({ kind: 'json', body: { series } });
      } catch (e) {
        // `series[3].fields.v[17]` → `line 812.fields.v`; a series-wide problem names its first line.
        throw remapIssues(e, /^series\[(\d+)\]/, (k, rest) => {
          const at = /\[(\d+)\]/.exec(rest);
          return `line ${grouped[k]!.lines[at ? Number(at[1]) : 0]}${at ? rest.replace(at[0], '') : rest}`;
        });
      }
      await reply.status(204).send();
    } catch (e) {
      if (!(e instanceof S4Error)) throw e;
      if (e instanceof UnavailableError) void reply.header('retry-after', String(e.retryAfterSeconds));
      const error = { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
      const body = flavor === 'v1' ? { error: e.message, details: error } : { code: influxCode(e.status), message: e.message, error };
      await reply.status(e.status).header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(body));
    }
  }
}

/** Influx 2.x error codes by HTTP status (influxdata/influxdb kit/platform/errors). */
function influxCode(status: number): string {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'forbidden';
  if (status === 404) return 'not found';
  if (status === 413) return 'request too large';
  if (status === 429) return 'too many requests';
  if (status === 503) return 'unavailable';
  return 'invalid';
}
