import { h } from './dom.js';

/** The key lives in this tab's session storage only: closing the tab forgets it. */
const KEY = 's4.apiKey';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Params = Record<string, string | number | readonly string[] | undefined>;

export function query(params: Params): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) for (const x of v as readonly string[]) q.append(k, x);
    else q.set(k, String(v));
  }
  return q.toString();
}

export function apiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function forgetKey(): void {
  sessionStorage.removeItem(KEY);
  keyListeners.forEach((f) => f());
}

const keyListeners: (() => void)[] = [];
export function onKeyChange(f: () => void): void {
  keyListeners.push(f);
}

let asking: Promise<string | null> | null = null;

/** Ask once for a key, however many requests were refused at the same time. */
function askForKey(message: string): Promise<string | null> {
  asking ??= new Promise<string | null>((resolve) => {
    const input = h('input', { type: 'password', name: 'key', autocomplete: 'off', placeholder: 'API key', required: true });
    const dialog = h(
      'dialog',
      { id: 'key-dialog' },
      h(
        'form',
        { method: 'dialog' },
        h('p', {}, message),
        input,
        h('p', { class: 'hint' }, 'Kept in this tab only (session storage).'),
        h('menu', {}, h('button', { value: 'cancel', type: 'button', onclick: () => dialog.close('') }, 'Cancel'), h('button', { value: 'ok', class: 'primary' }, 'Use key')),
      ),
    );
    dialog.addEventListener('close', () => {
      const key = dialog.returnValue === 'ok' ? input.value.trim() : '';
      dialog.remove();
      asking = null;
      if (key) {
        sessionStorage.setItem(KEY, key);
        keyListeners.forEach((f) => f());
      }
      resolve(key || null);
    });
    document.body.append(dialog);
    dialog.showModal();
  });
  return asking;
}

/** GET (or other) against this origin's API with the session's key; a 401 asks for a key and retries. */
export async function request(path: string, init: RequestInit = {}, signal?: AbortSignal): Promise<Response> {
  for (;;) {
    const key = apiKey();
    const headers = new Headers(init.headers);
    if (key) headers.set('authorization', `Bearer ${key}`);
    const res = await fetch(path, { ...init, headers, signal: signal ?? null });
    if (res.status === 401) {
      const err = await errorOf(res);
      if (key) sessionStorage.removeItem(KEY);
      if (await askForKey(key ? `That key was refused (${err.message}). Enter another:` : 'This server needs an API key.')) continue;
      throw err;
    }
    if (!res.ok) throw await errorOf(res);
    return res;
  }
}

export async function getJson<T>(path: string, params: Params = {}, signal?: AbortSignal): Promise<T> {
  const q = query(params);
  const res = await request(q ? `${path}?${q}` : path, {}, signal);
  return (await res.json()) as T;
}

async function errorOf(res: Response): Promise<ApiError> {
  try {
    const body = (await res.json()) as { error?: { code?: string; message?: string } };
    return new ApiError(res.status, body.error?.code ?? 'error', body.error?.message ?? res.statusText);
  } catch {
    return new ApiError(res.status, 'error', `${res.status} ${res.statusText}`);
  }
}

/** The wire shapes of /v1/query, /v1/latest and /v1/series (JSON). */
export type FieldValue = number | string | boolean | null | FieldValue[] | { [k: string]: FieldValue };
export interface Series {
  metric: string;
  tags: Record<string, string>;
  ts: number[];
  fields: Record<string, FieldValue[]>;
}
export interface SeriesKey {
  metric: string;
  tags: Record<string, string>;
}
