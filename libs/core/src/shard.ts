/** The shard of a series: its id's first 32 bits modulo the shard count. */
export function shardOf(id: string, shards: number): number {
  // The 8 hex digits read in place: a slice and parseInt were a string per series of every write.
  let v = 0;
  for (let i = 0; i < 8; i++) {
    const c = id.charCodeAt(i);
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : c >= 0x61 && c <= 0x66 ? c - 0x57 : c >= 0x41 && c <= 0x46 ? c - 0x37 : -1;
    // Not a series id (fewer than 8 hex digits): parseInt's answer, as always.
    if (d < 0) return Number.parseInt(id.slice(0, 8), 16) % shards;
    v = v * 16 + d;
  }
  return v % shards;
}

export function allShards(shards: number): number[] {
  return Array.from({ length: shards }, (_, i) => i);
}
