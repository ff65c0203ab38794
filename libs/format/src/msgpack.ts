import { Packr } from 'msgpackr';

/**
 * The one msgpackr instance S4 encodes with. Its options change the bytes, so they are pinned
 * here and written into docs/format/README.md; change them only with a new format version.
 *
 * - useRecords: false: plain maps, readable by any MessagePack decoder.
 * - moreTypes: true: typed arrays (Float64Array, ...) travel as msgpackr extensions, so numeric
 *   columns cross the wire without per-element encoding.
 * - int64AsType 'number': 64-bit integers decode to numbers (timestamps fit in 2^53).
 * - mapsAsObjects: true: maps decode to plain objects.
 */
export const msgpack = new Packr({
  useRecords: false,
  moreTypes: true,
  int64AsType: 'number',
  mapsAsObjects: true,
  variableMapSize: true,
});
