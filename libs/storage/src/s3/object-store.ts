import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';
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

export interface S3ObjectStoreOptions {
  bucket: string;
  /** Prepended to every key; empty or ending with '/'. */
  prefix: string;
  region: string;
  endpoint?: string | undefined;
  forcePathStyle: boolean;
  /** Keep-alive sockets per process; bounds the fan-out a query can use. */
  maxSockets: number;
}

/** Object store on AWS S3 or an S3-compatible server. Credentials come from the default AWS chain. */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;

  constructor(private readonly options: S3ObjectStoreOptions) {
    const agent = { keepAlive: true, maxSockets: options.maxSockets };
    this.client = new S3Client({
      region: options.region,
      endpoint: options.endpoint,
      forcePathStyle: options.forcePathStyle,
      requestHandler: new NodeHttpHandler({ httpAgent: new HttpAgent(agent), httpsAgent: new HttpsAgent(agent) }),
    });
  }

  private key(key: string): string {
    return this.options.prefix + key;
  }

  /** For local servers and tests; production buckets are created by the infrastructure. */
  async ensureBucket(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.options.bucket }));
    } catch (e) {
      if (status(e) !== 404) throw e;
      try {
        await this.client.send(new CreateBucketCommand({ Bucket: this.options.bucket }));
      } catch (e2) {
        if (!(e2 instanceof S3ServiceException && /BucketAlready/.test(e2.name))) throw e2;
      }
    }
  }

  async put(key: string, body: Uint8Array, condition?: PutCondition): Promise<{ etag: string }> {
    try {
      const out = await this.client.send(
        new PutObjectCommand({
          Bucket: this.options.bucket,
          Key: this.key(key),
          Body: body,
          ContentLength: body.byteLength,
          IfMatch: condition?.ifMatch,
          IfNoneMatch: condition?.ifNoneMatch,
        }),
      );
      return { etag: out.ETag ?? '' };
    } catch (e) {
      // 412 PreconditionFailed; 409 ConditionalRequestConflict when a concurrent write races.
      if (condition && (status(e) === 412 || status(e) === 409)) throw new PreconditionFailedError(key);
      throw e;
    }
  }

  async get(key: string, options?: GetOptions): Promise<GetResult | null> {
    const range = options?.range;
    if (range && range.length === 0) {
      const info = await this.head(key);
      return info ? { notModified: false, body: new Uint8Array(0), etag: info.etag, size: info.size } : null;
    }
    try {
      const out = await this.client.send(
        new GetObjectCommand({
          Bucket: this.options.bucket,
          Key: this.key(key),
          Range: range ? `bytes=${range.offset}-${range.offset + range.length - 1}` : undefined,
          IfNoneMatch: options?.ifNoneMatch,
        }),
      );
      const body = await out.Body!.transformToByteArray();
      const total = out.ContentRange ? Number(out.ContentRange.split('/')[1]) : (out.ContentLength ?? body.length);
      return { notModified: false, body, etag: out.ETag ?? '', size: total };
    } catch (e) {
      if (status(e) === 304) return { notModified: true, etag: options?.ifNoneMatch ?? '' };
      if (status(e) === 404) return null;
      throw e;
    }
  }

  async head(key: string): Promise<{ size: number; etag: string } | null> {
    try {
      const out = await this.client.send(new HeadObjectCommand({ Bucket: this.options.bucket, Key: this.key(key) }));
      return { size: out.ContentLength ?? 0, etag: out.ETag ?? '' };
    } catch (e) {
      if (status(e) === 404) return null;
      throw e;
    }
  }

  async *list(prefix: string): AsyncIterable<ObjectInfo> {
    let token: string | undefined;
    do {
      const out = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.options.bucket, Prefix: this.key(prefix), ContinuationToken: token }),
      );
      for (const o of out.Contents ?? []) yield { key: o.Key!.slice(this.options.prefix.length), size: o.Size ?? 0 };
      token = out.IsTruncated ? out.NextContinuationToken : undefined;
    } while (token);
  }

  async delete(keys: readonly string[]): Promise<void> {
    for (let i = 0; i < keys.length; i += 1000) {
      const batch = keys.slice(i, i + 1000);
      const out = await this.client.send(
        new DeleteObjectsCommand({ Bucket: this.options.bucket, Delete: { Objects: batch.map((k) => ({ Key: this.key(k) })), Quiet: true } }),
      );
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
