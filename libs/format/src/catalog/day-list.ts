/**
 * The day list of a shard (docs/format/catalog.md, "Day list"): the UTC days that have a
 * catalog, as a small JSON document `{"version":1,"days":[<ms>...]}`, ascending.
 */
export const DAY_LIST_VERSION = 1;

export function encodeDayList(days: readonly number[]): Uint8Array {
  return Buffer.from(JSON.stringify({ version: DAY_LIST_VERSION, days }));
}

export function decodeDayList(bytes: Uint8Array): number[] {
  const doc = JSON.parse(Buffer.from(bytes).toString('utf8')) as { version: number; days: number[] };
  if (doc.version !== DAY_LIST_VERSION || !Array.isArray(doc.days)) throw new Error(`catalog day list has unknown version ${doc.version}`);
  return doc.days;
}
