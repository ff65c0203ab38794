// Type tests of the public surface: checked by `tsc -p apps/sdk/tsconfig.test.json` (npm run typecheck -w @s4/sdk);
// at run time vitest only executes them as no-ops.
import { describe, expectTypeOf, it } from 'vitest';
import {
  S4Client,
  S4Error,
  S4HttpError,
  S4NetworkError,
  S4TimeoutError,
  S4ValidationError,
  S4WriteError,
  type Column,
  type FieldValue,
  type FlushResult,
  type QueryResult,
  type Sample,
  type SeriesColumns,
  type SeriesInfo,
  type S4Writer,
  type WriterStats,
} from '../src/index.js';

describe('public types', () => {
  const client = new S4Client({ url: 'http://localhost:8080' });

  it('constructor options', () => {
    expectTypeOf(S4Client).constructorParameters.toEqualTypeOf<[import('../src/index.js').S4ClientOptions]>();
    // @ts-expect-error url is required
    void (() => new S4Client({}));
    // @ts-expect-error writeFormat is msgpack or json
    void (() => new S4Client({ url: 'http://x', writeFormat: 'csv' }));
  });

  it('write accepts one sample or an array and resolves to void', () => {
    expectTypeOf(client.write).parameter(0).toEqualTypeOf<Sample | readonly Sample[]>();
    expectTypeOf(client.write).returns.resolves.toBeVoid();
    // @ts-expect-error fields are required
    void (() => client.write({ metric: 'm', ts: 1 }));
    // @ts-expect-error ts is a number of milliseconds
    void (() => client.write({ metric: 'm', ts: new Date(), fields: {} }));
    // @ts-expect-error field values are JSON
    void (() => client.write({ metric: 'm', ts: 1, fields: { f: () => 1 } }));
    expectTypeOf<{ metric: 'm'; ts: 1; fields: { a: 1; b: 'x'; c: null; d: { e: [true] } } }>().toExtend<Sample>();
  });

  it('writer', () => {
    const writer = client.writer({ maxBatch: 100, flushMs: 50, concurrency: 2, maxBuffered: 1000 });
    expectTypeOf(writer).toEqualTypeOf<S4Writer>();
    expectTypeOf(writer.write).returns.resolves.toBeVoid();
    expectTypeOf(writer.flush).returns.resolves.toBeVoid();
    expectTypeOf(writer.close).returns.resolves.toBeVoid();
    expectTypeOf(writer.stats()).toEqualTypeOf<WriterStats>();
    // @ts-expect-error unknown option
    void (() => client.writer({ batch: 1 }));
  });

  it('reads return typed arrays', () => {
    expectTypeOf(client.query).returns.resolves.toEqualTypeOf<QueryResult>();
    expectTypeOf<QueryResult['series'][number]>().toEqualTypeOf<SeriesColumns>();
    expectTypeOf<SeriesColumns['ts']>().toEqualTypeOf<Float64Array>();
    expectTypeOf<Column>().toEqualTypeOf<Float64Array | FieldValue[]>();
    expectTypeOf(client.stream({ metric: 'm', from: 0, to: 1 })).toEqualTypeOf<AsyncGenerator<SeriesColumns, void, undefined>>();
    expectTypeOf(client.export({ metric: 'm', from: new Date(), to: 1, format: 'csv' })).toEqualTypeOf<AsyncGenerator<Uint8Array, void, undefined>>();
    expectTypeOf(client.series).returns.resolves.toEqualTypeOf<SeriesInfo[]>();
    expectTypeOf(client.flush).returns.resolves.toEqualTypeOf<FlushResult>();
    // @ts-expect-error metric is required
    void (() => client.query({ from: 0, to: 1 }));
    // @ts-expect-error unknown export format
    void (() => client.export({ metric: 'm', from: 0, to: 1, format: 'xml' }));
  });

  it('errors form a hierarchy with the server fields', () => {
    expectTypeOf<S4HttpError>().toExtend<S4Error>();
    expectTypeOf<S4TimeoutError>().toExtend<S4NetworkError>();
    expectTypeOf<S4ValidationError>().toExtend<S4Error>();
    expectTypeOf<S4WriteError>().toExtend<S4Error>();
    expectTypeOf<S4HttpError['status']>().toEqualTypeOf<number>();
    expectTypeOf<S4HttpError['code']>().toEqualTypeOf<string>();
    expectTypeOf<S4HttpError['details']>().toEqualTypeOf<unknown>();
    expectTypeOf<S4ValidationError['issues']>().toEqualTypeOf<{ path: string; message: string }[]>();
  });
});
