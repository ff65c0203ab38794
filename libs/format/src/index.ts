export * from './msgpack.js';
export * from './segment/index.js';
export {
  CATALOG_MAGIC,
  CATALOG_VERSION,
  decodeCatalog,
  encodeCatalog,
  MAX_CATALOG_METRICS,
  type Catalog,
  type CatalogEntry,
} from './catalog/catalog.js';
