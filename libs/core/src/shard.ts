/** The shard of a series: its id's first 32 bits modulo the shard count. */
export function shardOf(id: string, shards: number): number {
  return Number.parseInt(id.slice(0, 8), 16) % shards;
}

export function allShards(shards: number): number[] {
  return Array.from({ length: shards }, (_, i) => i);
}
