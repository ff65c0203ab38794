/** JSON Schemas of request and response bodies, for the OpenAPI document. */
const tags = { type: 'object', additionalProperties: { type: 'string' }, example: { sensor: 's1' } };
const fieldValue = { description: 'number, boolean, string, null or nested JSON' };

export const ERROR_SCHEMA = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: {
        code: { type: 'string', example: 'invalid_request' },
        message: { type: 'string' },
        details: { type: 'object', description: 'issues: [{path, message}] for invalid_request; {limit, max} for limit_exceeded' },
        id: { type: 'string', description: 'for 500s: the id in the server log' },
      },
    },
  },
};

const sample = {
  type: 'object',
  required: ['metric', 'ts', 'fields'],
  properties: { metric: { type: 'string' }, tags, ts: { type: 'integer', description: 'ms since the epoch' }, fields: { type: 'object', additionalProperties: fieldValue } },
};

const columns = {
  type: 'object',
  required: ['metric', 'ts', 'fields'],
  properties: {
    metric: { type: 'string' },
    tags,
    ts: { type: 'array', items: { type: 'integer' } },
    fields: { type: 'object', additionalProperties: { type: 'array', items: fieldValue } },
  },
};

export const WRITE_BODY_SCHEMA = {
  type: 'object',
  description: 'JSON or MessagePack; or NDJSON with one sample object per line',
  properties: { samples: { type: 'array', items: sample }, series: { type: 'array', items: columns } },
};

export const QUERY_BODY_SCHEMA = {
  type: 'object',
  required: ['metric', 'from', 'to'],
  properties: {
    metric: { type: 'string' },
    tags,
    from: { type: 'integer' },
    to: { type: 'integer' },
    fields: { type: 'array', items: { type: 'string' } },
    format: { type: 'string', enum: ['json', 'msgpack', 'csv', 'ndjson'] },
    step: { oneOf: [{ type: 'integer' }, { type: 'string', example: '1m' }] },
    agg: { type: 'array', items: { type: 'string', enum: ['avg', 'min', 'max', 'sum', 'count', 'first', 'last'] } },
    groupBy: { type: 'array', items: { type: 'string' } },
    maxPoints: { type: 'integer', minimum: 4 },
  },
};

/** On a query answered while some shards' ingest lag is over S4_INGEST_READY_LAG (S4_INGEST=kafka); also in the S4-Lagging-Shards header. */
const WARNINGS = {
  type: 'array',
  description: 'present only when something may be missing from the answer',
  items: {
    type: 'object',
    properties: {
      code: { type: 'string', enum: ['ingest_lag'] },
      message: { type: 'string' },
      shards: { type: 'array', items: { type: 'integer' }, description: 'shards whose recent writes may not be in the answer yet' },
    },
  },
};

export const QUERY_RESULT_SCHEMA = { type: 'object', properties: { series: { type: 'array', items: columns }, warnings: WARNINGS } };

export const SHARDS_SCHEMA = {
  type: 'object',
  properties: {
    ingest: { type: 'string', enum: ['direct', 'kafka'] },
    readyLag: { type: 'integer', nullable: true, description: 'S4_INGEST_READY_LAG (kafka only)' },
    lagReadAt: { type: 'string', format: 'date-time', nullable: true, description: 'when the lag was read from Kafka' },
    shards: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          shard: { type: 'integer' },
          lag: { type: 'integer', nullable: true, description: 'messages in the shard\'s Kafka partition not yet written to the hot tier and committed; null with direct ingest or when unknown' },
          lagging: { type: 'boolean', description: 'lag over readyLag: queries warn that this shard\'s recent data may be missing' },
        },
      },
    },
  },
};

export const SERIES_LIST_SCHEMA = {
  type: 'object',
  properties: { series: { type: 'array', items: { type: 'object', properties: { metric: { type: 'string' }, tags } } } },
};

export const FLUSH_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    objects: { type: 'integer' },
    series: { type: 'integer' },
    samples: { type: 'integer' },
    bytes: { type: 'integer' },
    busyShards: { type: 'integer', description: 'shards another owner was flushing; retry later' },
  },
};

export const COMPACT_RESULT_SCHEMA = {
  type: 'object',
  properties: Object.fromEntries(['windows', 'days', 'partsIn', 'bytesIn', 'bytesOut', 'samples', 'deleted', 'aborted', 'busyShards'].map((k) => [k, { type: 'integer' }])),
};

export const ROLLUP_RESULT_SCHEMA = {
  type: 'object',
  properties: { objects: { type: 'integer' }, series: { type: 'integer' }, windows: { type: 'integer' }, deleted: { type: 'integer', description: 'replaced rollup objects deleted after their grace' } },
};
