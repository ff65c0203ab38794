import { fileWriter, ParquetWriter, schemaFromColumnData, type ColumnSource } from 'hyparquet-writer';
import type { S4Client, Tags } from '@s4/sdk';

/** Rows per Parquet row group: the rows held in memory before they are written out. */
const ROW_GROUP = 20_000;

/**
 * Records as a Parquet file (hyparquet-writer): one row per sample with `metric` (string),
 * `tags` (JSON), `ts` (timestamp, ms) and `fields` (JSON: the sample's fields, nested values
 * as they were written). DuckDB reads it as is (`fields->'imu'->>'vibration'`), pandas and
 * pyarrow as strings to parse. Read with client.records(), a row group at a time.
 */
export async function exportParquet(client: S4Client, file: string, metrics: readonly string[], spec: { tags: Tags; from: number; to: number; fields?: string[] }): Promise<number> {
  const columns = (metric: string[], tags: string[], ts: bigint[], fields: string[]): ColumnSource[] => [
    { name: 'metric', data: metric, type: 'STRING', nullable: false },
    { name: 'tags', data: tags, type: 'JSON', nullable: false },
    { name: 'ts', data: ts, type: 'TIMESTAMP', nullable: false },
    { name: 'fields', data: fields, type: 'JSON', nullable: false },
  ];
  const writer = new ParquetWriter({ writer: fileWriter(file), schema: schemaFromColumnData({ columnData: columns([], [], [], []) }), createdBy: 's4 export' });
  let rows = 0;
  let group = { metric: [] as string[], tags: [] as string[], ts: [] as bigint[], fields: [] as string[] };
  const flush = async () => {
    if (group.ts.length === 0) return;
    await writer.write({ columnData: columns(group.metric, group.tags, group.ts, group.fields), rowGroupSize: ROW_GROUP });
    rows += group.ts.length;
    group = { metric: [], tags: [], ts: [], fields: [] };
  };
  for (const metric of metrics) {
    for await (const chunk of client.records({ metric, tags: spec.tags, ...(spec.fields ? { fields: spec.fields } : {}) }, { from: spec.from, to: spec.to })) {
      const tags = JSON.stringify(chunk.tags);
      for (const r of chunk.records()) {
        group.metric.push(r.metric);
        group.tags.push(tags);
        group.ts.push(BigInt(r.ts));
        group.fields.push(JSON.stringify(r.fields));
        if (group.ts.length === ROW_GROUP) await flush();
      }
    }
  }
  await flush();
  await writer.finish();
  return rows;
}
