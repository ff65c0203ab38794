import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
import type { Readable } from 'node:stream';
import {
  CreateBucketCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { PreconditionFailedError, type GetOptions, type GetResult, type ObjectInfo, type ObjectStore, type PutCondition } from '@s4/core';
import { bounded, objectStoreError, timeoutError, type Attempt } from './faults.js';

export interface S3ObjectStoreOptions {
  bucket: string;
  /** Prepended to every key; empty or ending with '/'. */
  prefix: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle: boolean;
  /** Keep-alive sockets per process; bounds the fan-out a query can use. */
  maxSockets: number;
  /** Budget of one call until S3 answers, the SDK's retries included (default 10 000). */
  timeoutMs?: number;
  /** A GET or HEAD with no answer after this long is sent again; the first answer wins (default 1000, 0: never). */
  hedgeAfterMs?: number;
}

/**
 * The slowest transfer still taken for a live one: a body gets the base budget plus its size at
 * this rate, so a large segment is not cut off while a stalled one still fails in bounded time.
 */
const MIN_BYTES_PER_MS = (2 * 1024 * 1024) / 1000;

/**
 * Object store on AWS S3 or an S3-compatible server. Credentials come from the default AWS chain.
 *
 * Every call is bounded: S3 must answer within `timeoutMs` (the SDK's standard retries, with their
 * jittered backoff and retry quota, run inside that budget) and a body may then take `timeoutMs`
 * plus its size at 2 MiB/s. Slow reads are hedged once. Timeouts, network failures, 5xx and
 * throttling become UnavailableError (503 to API callers); 404 and 412 keep their meaning.
 */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  private readonly timeoutMs: number;
  private readonly hedgeAfterMs: number;

  constructor(private readonly options: S3ObjectStoreOptions) {
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.hedgeAfterMs = options.hedgeAfterMs ?? 1_000;
    const agent = { keepAlive: true, maxSockets: options.maxSockets };
    // Half the budget per attempt: a connection that went silent is given up in time for the SDK
    // to try once more on a fresh one before the call's own deadline.
    const attemptMs = Math.max(50, Math.ceil(this.timeoutMs / 2));
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      maxAttempts: 3,
      retryMode: 'standard',
      requestHandler: new NodeHttpHandler({
        httpAgent: new HttpAgent(agent),
        httpsAgent: new HttpsAgent(agent),
        connectionTimeout: Math.min(attemptMs, 3_000),
        socketTimeout: attemptMs,
      }),
    });
  }

  private key(key: string): string {
    return this.options.prefix + key;
  }

  /**
   * One bounded call. `hedge` only for reads: a second GET of the same bytes is harmless, a second
   * PUT is not worth its cost. `sendBytes` extends the budget of an upload by its size.
   */
  private call<T>(what: string, run: (a: Attempt) => Promise<T>, hedge = false, sendBytes = 0): Promise<T> {
    const bodyMs = (bytes: number) => this.timeoutMs + bytes / MIN_BYTES_PER_MS;
    return bounded({ answerMs: bodyMs(sendBytes), bodyMs, hedgeAfterMs: hedge ? this.hedgeAfterMs : 0, onTimeout: () => timeoutError(what) }, run);
  }

  /** For local servers and tests; production buckets are created by the infrastructure. */
  async ensureBucket(): Promise<void> {
    const Bucket = this.options.bucket;
    const what = 'checking the bucket';
    try {
      await this.call(what, ({ signal }) => this.client.send(new HeadBucketCommand({ Bucket }), { abortSignal: signal }));
    } catch (e) {
      if (status(e) !== 404) throw objectStoreError(e, what);
      try {
        await this.call('creating the bucket', ({ signal }) => this.client.send(new CreateBucketCommand({ Bucket }), { abortSignal: signal }));
      } catch (e2) {
        if (!(e2 instanceof S3ServiceException && /BucketAlready/.test(e2.name))) throw objectStoreError(e2, 'creating the bucket');
      }
    }
  }

  async put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }> {
    const what = 'writing an object';
    try {
      const out = await this.call(
        what,
        ({ signal }) =>
          this.client.send(
            new PutObjectCommand({
              Bucket: this.options.bucket,
              Key: this.key(key),
              Body: body,
              ContentLength: body.byteLength,
              IfMatch: condition?.ifMatch,
              IfNoneMatch: condition?.ifNoneMatch,
            }),
            { abortSignal: signal },
          ),
        false,
        body.byteLength,
      );
      return { etag: out.ETag ?? '' };
    } catch (e) {
      // 412 PreconditionFailed; 409 ConditionalRequestConflict when a concurrent write races.
      if (condition && (status(e) === 412 || status(e) === 409)) throw new PreconditionFailedError(key);
      throw objectStoreError(e, what);
    }
  }

  async get(key: string, options?: GetOptions): Promise<GetResult | null> {
    const range = options?.range;
    if (range && range.length === 0) {
      const info = await this.head(key);
      return info ? { notModified: false, body: new Uint8Array(0), etag: info.etag, size: info.size } : null;
    }
    const what = 'reading an object';
    try {
      return await this.call(
        what,
        async ({ signal, answered }): Promise<GetResult | null> => {
          try {
            const out = await this.client.send(
              new GetObjectCommand({
                Bucket: this.options.bucket,
                Key: this.key(key),
                Range: range ? `bytes=${range.offset}-${range.offset + range.length - 1}` : undefined,
                IfNoneMatch: options?.ifNoneMatch,
              }),
              { abortSignal: signal },
            );
            answered(out.ContentLength ?? 0);
            const body = await readBody(out.Body, signal);
            const total = out.ContentRange ? Number(out.ContentRange.split('/')[1]) : (out.ContentLength ?? body.length);
            return { notModified: false, body, etag: out.ETag ?? '', size: total };
          } catch (e) {
            // Answers, not failures: a hedged copy must not wait for the other one over them.
            if (status(e) === 304) return { notModified: true, etag: options?.ifNoneMatch ?? '' };
            if (status(e) === 404) return null;
            throw e;
          }
        },
        true,
      );
    } catch (e) {
      throw objectStoreError(e, what);
    }
  }

  async head(key: string): Promise<{ size: number; etag: string } | null> {
    const what = 'reading object metadata';
    try {
      return await this.call(
        what,
        async ({ signal }) => {
          try {
            const out = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }), { abortSignal: signal });
            return { size: out.ContentLength ?? 0, etag: out.ETag ?? '' };
          } catch (e) {
            if (status(e) === 404) return null;
            throw e;
          }
        },
        true,
      );
    } catch (e) {
      throw objectStoreError(e, what);
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    const what = 'listing objects';
    let token: string | undefined;
    do {
      const page = token;
      const out = await this.call(what, ({ signal }) =>
        this.client.send(new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.key(prefix), ContinuationToken: page }), { abortSignal: signal }),
      ).catch((e: unknown) => {
        throw objectStoreError(e, what);
      });
      for (const o of out.Contents ?? []) yield { key: o.Key!.slice(this.options.prefix.length), size: o.Size ?? 0 };
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(keys: readonly string[]): Promise<void> {
    const what = 'deleting objects';
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const out = await this.call(what, ({ signal }) =>
        this.client.send(
          new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: batch.map((k) => ({ Key: this.key(k) })), Quiet: true } }),
          { abortSignal: signal },
        ),
      ).catch((e: unknown) => {
        throw objectStoreError(e, what);
      });
      if (out.Errors?.length) throw new Error(`deleting ${out.Errors.length} objects: ${out.Errors[0]?.Key}: ${out.Errors[0]?.Message}`);
    }
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

function status(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
}

/**
 * The whole body. An abort (deadline, or the other copy of a hedged read won) destroys the
 * stream, so a body stalled mid-way releases its socket instead of waiting for the server.
 */
async function readBody(body: unknown, signal: AbortSignal): Promise<Uint8Array> {
  if (body === undefined || body === null) return new Uint8Array(0);
  const stream = body as Readable & { transformToByteArray(): Promise<Uint8Array> };
  const stop = () => stream.destroy(new Error('reading the body was aborted'));
  if (signal.aborted) stop();
  signal.addEventListener('abort', stop, { once: true });
  try {
    return await stream.transformToByteArray();
  } finally {
    signal.removeEventListener('abort', stop);
  }
}
