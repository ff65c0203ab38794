import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KeyRing, hashKey } from '../auth/keys.js';
import { ApiKeyGuard } from './api-key.guard.js';

describe('ApiKeyGuard', () => {
  it('DELETE /v1/series needs the admin scope, though GET /v1/series needs only read', () => {
    const file = join(mkdtempSync(join(tmpdir(), 's4-guard-')), 'keys.json');
    writeFileSync(
      file,
      JSON.stringify([
        { id: 'reader', sha256: hashKey('reader-secret-0123456789'), scopes: ['read', 'write'] },
        { id: 'admin', sha256: hashKey('admin-secret-0123456789'), scopes: ['admin'] },
      ]),
    );
    const guard = new ApiKeyGuard({ keys: KeyRing.load([], file), namespace: 'default', publicMetrics: false });
    expect(() => guard.authorize('/v1/series?metric=m', 'Bearer reader-secret-0123456789', 'GET')).not.toThrow();
    expect(() => guard.authorize('/v1/series?metric=m', 'Bearer reader-secret-0123456789', 'DELETE')).toThrow(/needs admin/);
    expect(() => guard.authorize('/v1/series?metric=m', 'Bearer admin-secret-0123456789', 'DELETE')).not.toThrow();
  });
});
