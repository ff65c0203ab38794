import { DAY_MS, WINDOW_MS, parseSegmentKey, segmentShardPrefix, windowsOverlapping, type ObjectStore, type ShardRef } from '@s4/core';
import { SEGMENT_TRAILER_BYTES, decodeFooter, readTrailer, type CatalogEntry } from '@s4/format';
import { metricsOf, type CatalogStore } from './catalog-store.js';

/**
 * Rebuild a shard's catalogs from the segment objects themselves (LIST + footers), for when a
 * catalog object was lost. Slow by design: it lists, which queries never do.
 */
export async function rebuildCatalogs(objects: ObjectStore, catalogs: CatalogStore, ref: ShardRef, now: number): Promise<number> {
  const byDay = new Map<number, CatalogEntry[]>();
  for await (const obj of objects.list(segmentShardPrefix(ref))) {
    const parsed = parseSegmentKey(obj.key);
    if (!parsed) continue;
    const tail = await objects.get(obj.key, { range: { offset: obj.size - SEGMENT_TRAILER_BYTES, length: SEGMENT_TRAILER_BYTES } });
    if (!tail || tail.notModified) continue;
    const { footerOffset, footerLength } = readTrailer(tail.body);
    const got = await objects.get(obj.key, { range: { offset: footerOffset, length: footerLength } });
    if (!got || got.notModified) continue;
    const footer = decodeFooter(got.body);
    const day = Math.floor(parsed.window / DAY_MS) * DAY_MS;
    let list = byDay.get(day);
    if (!list) byDay.set(day, (list = []));
    const minTs = Math.min(...footer.series.map((s) => s.minTs));
    const maxTs = Math.max(...footer.series.map((s) => s.maxTs));
    // A day object is listed once per window it may hold (keys.md, "Day fold"); readers clip it to each.
    const windows = parsed.day && footer.series.length > 0 ? windowsOverlapping(minTs, maxTs + 1) : [parsed.window];
    for (const window of windows) {
      list.push({
        window,
        part: parsed.part,
        fence: parsed.fence,
        key: obj.key,
        size: obj.size,
        footerOffset,
        footerLength,
        series: footer.series.length,
        samples: footer.series.reduce((n, s) => n + s.count, 0),
        minTs: parsed.day ? Math.max(minTs, window) : minTs,
        maxTs: parsed.day ? Math.min(maxTs, window + WINDOW_MS - 1) : maxTs,
        metrics: metricsOf(footer.series.map((s) => s.metric)),
        createdAt: now,
      });
    }
  }
  for (const [day, entries] of byDay) await catalogs.replace(ref, day, entries);
  return [...byDay.values()].reduce((n, l) => n + l.length, 0);
}
