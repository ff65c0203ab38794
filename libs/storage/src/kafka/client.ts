import { generateAuthToken } from 'aws-msk-iam-sasl-signer-js';
import { Kafka, logLevel, type LogEntry, type SASLOptions } from 'kafkajs';
import { S4Error, UnavailableError } from '@s4/core';

/** How to reach the cluster and what S4 names in it. */
export interface KafkaOptions {
  readonly brokers: readonly string[];
  readonly clientId: string;
  readonly tls: boolean;
  /** `aws-iam`: SASL/OAUTHBEARER with a token signed by the process's AWS credentials (MSK). */
  readonly auth: 'none' | 'aws-iam';
  readonly region: string;
  /** Topics are `<topicPrefix>.<namespace>`; the ingest role's consumer group is `<topicPrefix>.ingest`. */
  readonly topicPrefix: string;
  /** Budget of one produce, offset read or admin call. */
  readonly timeoutMs: number;
  /** Where kafkajs's warnings and errors go (it retries on its own; these say why it had to). */
  readonly log?: (level: 'warn' | 'error', message: string) => void;
}

export function topicOf(prefix: string, ns: string): string {
  return `${prefix}.${ns}`;
}

export function groupOf(prefix: string): string {
  return `${prefix}.ingest`;
}

export function createKafka(options: KafkaOptions): Kafka {
  const { brokers, clientId, tls, auth, region, timeoutMs, log } = options;
  const sasl: SASLOptions | undefined =
    auth === 'aws-iam'
      ? {
          mechanism: 'oauthbearer',
          // MSK IAM: a presigned token from the default credential chain (the ECS task role).
          oauthBearerProvider: async () => ({ value: (await generateAuthToken({ region })).token }),
        }
      : undefined;
  return new Kafka({
    clientId,
    brokers: [...brokers],
    ssl: tls,
    ...(sasl ? { sasl } : {}),
    connectionTimeout: Math.min(timeoutMs, 10_000),
    requestTimeout: timeoutMs,
    // kafkajs retries on its own within each call; the caller's timeout (timed) bounds the whole.
    retry: { initialRetryTime: 100, maxRetryTime: 2_000, retries: 8 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log: entry }: LogEntry) => {
        const text = `kafka: ${entry.message}${entry.error ? ` (${String(entry.error)})` : ''}`;
        if (log) log(level === logLevel.ERROR ? 'error' : 'warn', text);
        else process.emitWarning(text);
      },
  });
}

/**
 * One call to Kafka, bounded: an answer within `ms`, or UnavailableError (503 with Retry-After to
 * an API caller). The call itself may still finish later (kafkajs keeps retrying); its outcome is
 * then ignored, which is safe because every write S4 puts in the log is idempotent.
 */
export async function timed<T>(what: string, ms: number, call: Promise<T>): Promise<T> {
  call.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new UnavailableError('ingest log', `${what}: Kafka did not answer within ${ms} ms`, 5, 'timeout')), ms);
  });
  try {
    return await Promise.race([call, timeout]);
  } catch (e) {
    if (e instanceof S4Error) throw e;
    throw new UnavailableError('ingest log', `${what}: ${e instanceof Error ? e.message : String(e)}`, 5);
  } finally {
    clearTimeout(timer);
  }
}
