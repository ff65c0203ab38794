import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { z } from 'zod';

/** What a key may do. `admin` implies nothing else: give a key every scope it needs. */
export const SCOPES = ['read', 'write', 'admin'] as const;
export type Scope = (typeof SCOPES)[number];

export interface ApiKey {
  /** Names the key in errors, logs and metrics; never the secret. */
  readonly id: string;
  readonly scopes: ReadonlySet<Scope>;
  /** Namespaces the key may touch; `*` is every namespace. */
  readonly namespaces: ReadonlySet<string>;
  /** Requests per second (token bucket with a burst of twice that); undefined: unlimited. */
  readonly ratePerSecond: number | undefined;
}

const hex64 = /^[0-9a-f]{64}$/;

/** One key in the keys file. The secret itself is never stored: only its SHA-256. */
const keyFileSchema = z
  .array(
    z.strictObject({
      id: z.string().regex(/^[A-Za-z0-9._-]{1,64}$/, 'id: letters, digits, . _ -, at most 64'),
      sha256: z.string().regex(hex64, 'sha256: 64 lowercase hex digits (s4 admin hash-key <secret> prints it)'),
      scopes: z.array(z.enum(SCOPES)).min(1, 'scopes: at least one of read, write, admin'),
      namespaces: z.array(z.string().min(1)).min(1).default(['*']),
      ratePerSecond: z.number().positive().optional(),
    }),
  )
  .superRefine((keys, ctx) => {
    const seen = new Set<string>();
    for (const [i, k] of keys.entries()) {
      if (seen.has(k.id)) ctx.addIssue({ code: 'custom', path: [i, 'id'], message: `id ${k.id} is used twice` });
      seen.add(k.id);
    }
  });

export function hashKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * The keys a server accepts, by the SHA-256 of the secret. Looking a hash up in a Map reveals
 * nothing useful through timing: an attacker who could steer it would need SHA-256 preimages.
 */
export class KeyRing {
  private constructor(private readonly byHash: ReadonlyMap<string, ApiKey>) {}

  /**
   * `plain`: S4_API_KEYS, full-access keys given as secrets (hashed here, kept only hashed).
   * `file`: S4_API_KEYS_FILE, scoped keys stored as hashes (JSON, see docs/security.md).
   */
  static load(plain: readonly string[], file: string | undefined): KeyRing {
    const byHash = new Map<string, ApiKey>();
    plain.forEach((secret, i) => byHash.set(hashKey(secret), { id: `env-${i + 1}`, scopes: new Set(SCOPES), namespaces: new Set(['*']), ratePerSecond: undefined }));
    if (file !== undefined) {
      let raw: unknown;
      try {
        raw = JSON.parse(readFileSync(file, 'utf8'));
      } catch (e) {
        throw new Error(`S4_API_KEYS_FILE ${file} cannot be read as JSON: ${(e as Error).message}`, { cause: e });
      }
      const parsed = keyFileSchema.safeParse(raw);
      if (!parsed.success) throw new Error(`S4_API_KEYS_FILE ${file}: ${parsed.error.issues.map((i) => `[${i.path.join('.')}] ${i.message}`).join('; ')}`);
      for (const k of parsed.data) byHash.set(k.sha256, { id: k.id, scopes: new Set(k.scopes), namespaces: new Set(k.namespaces), ratePerSecond: k.ratePerSecond });
    }
    return new KeyRing(byHash);
  }

  get enabled(): boolean {
    return this.byHash.size > 0;
  }

  find(secret: string): ApiKey | undefined {
    return this.byHash.get(hashKey(secret));
  }
}

/**
 * Per-key token buckets: `rate` tokens a second, up to `2 × rate` saved. Returns 0 when a
 * request may go, else the seconds until one may (the Retry-After).
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  take(key: ApiKey): number {
    const rate = key.ratePerSecond;
    if (rate === undefined) return 0;
    const now = this.now();
    const burst = 2 * rate;
    const b = this.buckets.get(key.id) ?? { tokens: burst, at: now };
    b.tokens = Math.min(burst, b.tokens + ((now - b.at) / 1000) * rate);
    b.at = now;
    this.buckets.set(key.id, b);
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / rate));
  }
}
