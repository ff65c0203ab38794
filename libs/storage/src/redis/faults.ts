import { S4Error, UnavailableError } from '@s4/core';

/** Why the hot tier could not serve a command, as far as a caller needs to know. */
export type HotTierFault = 'timeout' | 'unavailable' | 'full';

/**
 * Seconds a caller should wait before trying again. A full hot tier frees memory only as flushes
 * move windows to S3 (or an operator raises maxmemory), so it is asked to wait longest.
 */
const RETRY_AFTER_S: Readonly<Record<HotTierFault, number>> = { timeout: 5, unavailable: 2, full: 30 };

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
/** Server replies that mean "not now": loading the dataset, a script running too long, a failover, a cluster reshaping. */
const BUSY_REPLY = /^(LOADING|BUSY|READONLY|MASTERDOWN|TRYAGAIN|CLUSTERDOWN|NOREPLICAS)\b/;
/** What ioredis says when the connection is down, dropped under a command or not set up yet. */
const CLIENT_DOWN = [/^Stream isn't writeable/, /^Cluster isn't ready/, /^Connection is closed/, /^Command aborted due to connection close/, /^Failed to refresh slots cache/, /^Socket timeout/];

/**
 * Classify a failed command: a fault of the server or the network (worth retrying later) or
 * null for everything else (a script bug, a wrong password on a live connection), which must
 * surface as it is.
 */
export function hotTierFault(e: unknown): HotTierFault | null {
  if (!(e instanceof Error)) return null;
  const msg = e.message;
  // Also inside a script error: the write the script attempted was refused before any took place.
  if (msg.includes('OOM command not allowed')) return 'full';
  if (msg === 'Command timed out') return 'timeout';
  if (BUSY_REPLY.test(msg)) return 'unavailable';
  if (e.name === 'MaxRetriesPerRequestError' || e.name === 'ClusterAllFailedError') return 'unavailable';
  if (CLIENT_DOWN.some((re) => re.test(msg))) return 'unavailable';
  const code = (e as { code?: unknown }).code;
  return typeof code === 'string' && NETWORK_CODES.has(code) ? 'unavailable' : null;
}

/** The error a caller gets: UnavailableError (503) for faults; S4Errors (a lost lease) and anything unclassified as they are. */
export function hotTierError(e: unknown, what: string): unknown {
  if (e instanceof S4Error) return e;
  const fault = hotTierFault(e);
  if (!fault) return e;
  const err = new UnavailableError('hot tier', what, RETRY_AFTER_S[fault], fault);
  err.cause = e;
  return err;
}
