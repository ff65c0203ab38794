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
    matchers: {
      type: 'array',
      description: 'tag matchers, all of which must hold (besides tags); a series without the tag matches as if its value were ""',
      items: { type: 'object', required: ['key', 'op', 'value'], properties: { key: { type: 'string' }, op: { type: 'string', enum: ['=', '!=', '=~', '!~'] }, value: { type: 'string' } } },
    },
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

/** The `match` query parameter, as every selector endpoint documents it. */
export const MATCH_DOC =
  'tag matcher, repeatable, all must hold: key=value, key!=value, key=~regex, key!~regex (the key ends at the first operator; regexes are anchored, JavaScript syntax, at most 1024 characters; a series without the tag matches as if its value were "")';

export const LABELS_SCHEMA = { type: 'object', required: ['labels'], properties: { labels: { type: 'array', items: { type: 'string' } } } };
export const LABEL_VALUES_SCHEMA = { type: 'object', required: ['values'], properties: { values: { type: 'array', items: { type: 'string' } } } };

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
    hotBytes: { type: 'integer', description: 'bytes of hot-tier logs flushed and released' },
    busyShards: { type: 'integer', description: 'shards another owner (a fold, another process) still held after waiting about twice S4_LEASE_TTL_MS for them; retry later' },
  },
};

export const COMPACT_RESULT_SCHEMA = {
  type: 'object',
  properties: {
    ...Object.fromEntries(['windows', 'days', 'partsIn', 'bytesIn', 'bytesOut', 'samples', 'deleted', 'aborted', 'busyShards'].map((k) => [k, { type: 'integer' }])),
    index: {
      type: 'object',
      description: 'series indexes brought up to their catalogs after the folds (absent with S4_SERIES_INDEX=false)',
      properties: { indexes: { type: 'integer', description: 'shard-days written' }, footers: { type: 'integer', description: 'footers read for parts not indexed before' }, bytes: { type: 'integer' } },
    },
  },
};

export const ROLLUP_RESULT_SCHEMA = {
  type: 'object',
  properties: { objects: { type: 'integer' }, series: { type: 'integer' }, windows: { type: 'integer' }, deleted: { type: 'integer', description: 'replaced rollup objects deleted after their grace' } },
};

const int = { type: 'integer' };
const nullableTime = { type: 'integer', nullable: true, description: 'ms since the epoch, or null' };

/** GET /v1/admin/shards. Each shard object is open (additionalProperties): new concerns add a key beside the others. */
export const SHARDS_SCHEMA = {
  type: 'object',
  required: ['now', 'lookbackMs', 'ingest', 'shards'],
  properties: {
    now: { ...int, description: 'the server clock when this was read' },
    lookbackMs: { ...int, description: 'catalogs of the days overlapping [now - lookbackMs, now] were read' },
    ingest: { type: 'string', enum: ['direct', 'kafka'] },
    readyLag: { type: 'integer', nullable: true, description: 'S4_INGEST_READY_LAG (kafka only)' },
    lagReadAt: { type: 'string', format: 'date-time', nullable: true, description: 'when the lag was read from Kafka' },
    shards: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: true,
        required: ['shard', 'hot', 'flush', 'compaction', 'rollup', 'lag', 'lagging'],
        properties: {
          shard: int,
          lag: { type: 'integer', nullable: true, description: "messages in the shard's Kafka partition not yet written to the hot tier and committed; null with direct ingest or when unknown" },
          lagging: { type: 'boolean', description: "lag over readyLag: queries warn that this shard's recent data may be missing" },
          hot: {
            type: 'object',
            description: 'what the hot tier holds for the shard (not yet flushed)',
            properties: { bytes: int, logs: int, windows: { type: 'array', items: int }, oldestWindow: { ...nullableTime, description: 'start of the oldest unflushed window' } },
          },
          flush: {
            type: 'object',
            properties: {
              closedWindows: { ...int, description: 'closed windows still in the hot tier' },
              lagMs: { ...int, description: 'since the oldest closed hot window closed; 0 when none' },
              lastAt: { ...nullableTime, description: 'when the newest part (flush or fold) was registered' },
              lastWindow: nullableTime,
              lastLagMs: { type: 'integer', nullable: true, description: 'how long after its window closed the newest part was registered' },
            },
          },
          compaction: {
            type: 'object',
            description: 'registered parts per window in the lookback; windowsWithDebt have more than one',
            properties: Object.fromEntries(['windows', 'parts', 'bytes', 'maxPartsPerWindow', 'windowsWithDebt'].map((k) => [k, int])),
          },
          rollup: {
            type: 'object',
            description: 'windows whose rollup matches their current parts (fresh) or not (stale: queries read raw there)',
            properties: { fresh: int, stale: int, oldestStale: nullableTime, lastAt: nullableTime },
          },
        },
      },
    },
  },
};

const duration = { type: ['integer', 'null'], description: 'ms; null: forever / unlimited' };
const limitValue = { type: ['integer', 'null'], description: 'null: unlimited' };

export const NAMESPACES_SCHEMA = {
  type: 'object',
  properties: {
    defaultNamespace: { type: 'string' },
    prices: { type: 'object', properties: { storageGbMonth: { type: 'number' }, putPer1000: { type: 'number' }, getPer1000: { type: 'number' } } },
    namespaces: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          name: { type: 'string' },
          prefixes: { type: 'array', items: { type: 'string' } },
          shards: { type: 'integer' },
          rawRetentionMs: duration,
          rollups: { type: 'array', items: { type: 'object', properties: { resolution: { type: 'string' }, retentionMs: duration } } },
          backfillMs: duration,
          hotMs: { type: 'integer' },
          limits: {
            type: 'object',
            properties: { maxActiveSeries: limitValue, maxNewSeriesPerMinute: limitValue, maxFields: { type: 'integer' }, maxRecordBytes: { type: 'integer' }, maxSamplesPerSecond: limitValue },
          },
        },
      },
    },
  },
};

const usageRow = {
  type: 'object',
  properties: { namespace: { type: 'string' }, metric: { type: 'string' }, activeSeries: { type: 'integer' }, samplesHour: { type: 'integer' }, samplesDay: { type: 'integer' } },
};

export const TOP_SCHEMA = {
  type: 'object',
  properties: { by: { type: 'string', enum: ['series', 'samples'] }, namespaces: { type: 'array', items: usageRow }, metrics: { type: 'array', items: usageRow } },
};

export const CARDINALITY_SCHEMA = {
  type: 'object',
  properties: {
    metric: { type: 'string' },
    namespace: { type: 'string' },
    from: { type: 'integer' },
    to: { type: 'integer' },
    series: { type: 'integer' },
    tags: {
      type: 'array',
      items: { type: 'object', properties: { key: { type: 'string' }, values: { type: 'integer' }, top: { type: 'array', items: { type: 'object', properties: { value: { type: 'string' }, series: { type: 'integer' } } } } } },
    },
  },
};

export const TOMBSTONE_SCHEMA = {
  type: 'object',
  properties: {
    id: { type: 'string' },
    namespace: { type: 'string' },
    metric: { type: 'string' },
    tags: { type: 'object', additionalProperties: { type: 'string' } },
    from: { type: 'integer', description: 'inclusive, ms' },
    to: { type: 'integer', description: 'exclusive, ms' },
    createdAt: { type: 'integer' },
  },
};

const sizeCount = { type: 'object', properties: { bytes: { type: 'integer' }, count: { type: 'integer' } } };

export const USAGE_SCHEMA = {
  type: 'object',
  properties: {
    prices: { type: 'object', properties: { storageGbMonth: { type: 'number' }, putPer1000: { type: 'number' }, getPer1000: { type: 'number' } } },
    namespaces: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          namespace: { type: 'string' },
          objects: { type: 'object', properties: { bytes: { type: 'integer' }, count: { type: 'integer' }, byFolder: { type: 'object', additionalProperties: sizeCount } } },
          requestsLastDay: { type: 'object', properties: { put: { type: 'integer', description: 'PUT, COPY, POST, LIST' }, get: { type: 'integer', description: 'GET, HEAD' } } },
          dollars: { type: 'object', properties: { storagePerMonth: { type: 'number' }, requestsLastDay: { type: 'number' }, perMonthAtThisRate: { type: 'number' } } },
        },
      },
    },
  },
};
