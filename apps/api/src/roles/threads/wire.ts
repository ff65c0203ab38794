import type { MessagePort } from 'node:worker_threads';
import { CorruptDataError, LeaseLostError, LimitError, PreconditionFailedError, S4Error, UnavailableError, ValidationError } from '@s4/core';
import type { Config } from '@s4/config';
import type { CompactStats, FlushStats, RollupStats } from '@s4/engine';

/**
 * What crosses between the main thread and a role's worker thread (parentPort), and how errors
 * cross any MessagePort. Everything here is structured-clone data.
 */

/** The roles that run in worker threads. `ingest` will join them. */
export type WorkerRole = 'segment' | 'aggregate' | 'compact';

/** How a pass was started: by the role's own timer or by an admin endpoint. */
export type Trigger = 'periodic' | 'admin';

/** What one pass of a role did: the segment role flushes, the aggregate role rolls up, the compact role folds. */
export type PassStats = FlushStats | RollupStats | CompactStats;

/** The thread's `workerData`. */
export interface ThreadData {
  readonly role: WorkerRole;
  /** The validated config of the process (a plain object; structured clone keeps every field). */
  readonly config: Config;
  /** Run the role's periodic pass; false for a one-off thread started for one admin call. */
  readonly periodic: boolean;
  /** The embedded hot tier, served by the main thread (hot-tier-rpc); null with Redis. */
  readonly hotPort: MessagePort | null;
}

/** Admin calls a thread answers: `pass` (its role's pass over everything now) or a role-specific one. */
export type CallMethod = 'pass' | 'rebuild-catalog';

export type ToThread = { readonly type: 'call'; readonly id: number; readonly method: CallMethod } | { readonly type: 'stop' };

export type FromThread =
  | { readonly type: 'ready'; readonly threadId: number }
  | { readonly type: 'reply'; readonly id: number; readonly ok: true; readonly value: unknown }
  | { readonly type: 'reply'; readonly id: number; readonly ok: false; readonly error: WireError }
  | { readonly type: 'pass'; readonly trigger: Trigger; readonly stats: PassStats; readonly ms: number }
  | { readonly type: 'pass-error'; readonly trigger: Trigger; readonly error: WireError }
  /** The thread's object-store requests per namespace since its last report (the cost report). */
  | { readonly type: 'usage'; readonly requests: [string, { put: number; get: number }][] }
  | { readonly type: 'stopped' };

/**
 * An error in transit. Structured clone keeps only the standard fields of an Error, so an
 * S4Error's code, status and details are sent as plain properties and the class is re-created
 * by name on the other side (`instanceof LeaseLostError` still holds there).
 */
export interface WireError {
  readonly name: string;
  readonly message: string;
  readonly stack: string | undefined;
  readonly props: Record<string, unknown>;
  readonly cause?: WireError;
}

const CLASSES: Record<string, { prototype: Error }> = {
  S4Error,
  ValidationError,
  LimitError,
  PreconditionFailedError,
  LeaseLostError,
  CorruptDataError,
  UnavailableError,
};

export function toWire(e: unknown, depth = 0): WireError {
  if (!(e instanceof Error)) return { name: 'Error', message: String(e), stack: undefined, props: {} };
  const props: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e)) if (k !== 'cause' && k !== 'stack' && k !== 'message' && cloneable(v)) props[k] = v;
  const cause = e.cause !== undefined && depth < 4 ? toWire(e.cause, depth + 1) : undefined;
  return { name: e.name, message: e.message, stack: e.stack, props, ...(cause ? { cause } : {}) };
}

export function fromWire(w: WireError): Error {
  const e = new Error(w.message);
  const cls = CLASSES[w.name];
  if (cls) Object.setPrototypeOf(e, cls.prototype);
  Object.assign(e, w.props);
  e.name = w.name;
  if (w.stack !== undefined) e.stack = w.stack;
  if (w.cause) Object.defineProperty(e, 'cause', { value: fromWire(w.cause), writable: true, configurable: true, enumerable: false });
  return e;
}

function cloneable(v: unknown): boolean {
  if (v === null || ['string', 'number', 'boolean', 'undefined'].includes(typeof v)) return true;
  try {
    structuredClone(v);
    return true;
  } catch {
    return false;
  }
}
