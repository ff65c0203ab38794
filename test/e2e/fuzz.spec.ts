import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { msgpack } from '@s4/format';
import { modeEnv } from '../support/modes.js';
import { S4Process } from '../support/s4-process.js';

/**
 * Every endpoint with generated bodies and parameters, against a real embedded server: no
 * answer is a 5xx, and a refused write leaves nothing behind. Each write carries its own metric,
 * so "nothing partially written" is checked per request.
 */
const H0 = Date.UTC(2026, 0, 3);
const names = fc.oneof(
  fc.constantFrom('value', 'constructor', 'toString', '__proto__', 'valueOf', 'hasOwnProperty', '', ' ', 'a.b', 'a\u0000b', '\ud800', 'x'.repeat(300)),
  fc.string({ maxLength: 12 }),
);
const leaf = fc.oneof(fc.double(), fc.integer(), fc.boolean(), fc.constant(null), fc.string({ maxLength: 20 }), fc.constant(Number.MAX_VALUE));
const fieldValue = fc.oneof(leaf, fc.jsonValue({ maxDepth: 4 }), fc.array(leaf, { maxLength: 4 }), fc.dictionary(names, leaf, { maxKeys: 3 }));
const ts = fc.oneof(fc.integer({ min: H0, max: H0 + 6 * 3_600_000 }), fc.constantFrom(-1, 1.5, Number.MAX_SAFE_INTEGER, 0, 'now', null));
const sample = fc.record(
  { tags: fc.oneof(fc.dictionary(names, fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { maxKeys: 3 }), fc.constant(undefined)), ts, fields: fc.dictionary(names, fieldValue, { maxKeys: 4 }) },
  { requiredKeys: ['ts', 'fields'] },
);
// Mostly-valid shapes, so that accepted writes (and their mixes with bad ones) are common.
const simpleName = fc.stringMatching(/^[a-z][a-z0-9._]{0,8}$/);
const goodSample = fc.record({
  tags: fc.dictionary(simpleName, simpleName, { maxKeys: 2 }),
  ts: fc.integer({ min: H0, max: H0 + 6 * 3_600_000 }),
  fields: fc.dictionary(fc.oneof(simpleName, fc.constantFrom('constructor', 'toString')), fc.oneof(leaf, fieldValue), { minKeys: 1, maxKeys: 3 }),
});
const anySample = fc.oneof({ arbitrary: goodSample, weight: 4 }, { arbitrary: sample, weight: 1 });
const columns = fc.record({
  tags: fc.dictionary(names, fc.string({ maxLength: 8 }), { maxKeys: 2 }),
  ts: fc.array(ts, { maxLength: 5 }),
  fields: fc.dictionary(names, fc.array(fieldValue, { maxLength: 5 }), { maxKeys: 3 }),
});
const hostileBody = fc.record({
  samples: fc.option(fc.array(anySample, { minLength: 1, maxLength: 6 }), { nil: undefined, freq: 4 }),
  series: fc.option(fc.array(columns, { maxLength: 3 }), { nil: undefined, freq: 2 }),
  extra: fc.option(fieldValue, { nil: undefined, freq: 10 }),
});
const writeBody = fc.oneof({ arbitrary: fc.record({ samples: fc.array(goodSample, { minLength: 1, maxLength: 6 }) }), weight: 2 }, { arbitrary: hostileBody, weight: 3 });
const form = fc.constantFrom('json', 'json', 'msgpack', 'ndjson', 'raw');

describe('fuzzing every endpoint: no 5xx, nothing partially written', () => {
  let s4: S4Process;
  beforeAll(async () => {
    s4 = await S4Process.start(await modeEnv('embedded', { S4_MAX_BODY_BYTES: '262144' }));
  });
  afterAll(async () => {
    await s4?.stop();
  });

  it('writes', async () => {
    let n = 0;
    let accepted = 0;
    await fc.assert(
      fc.asyncProperty(writeBody, form, fc.string({ maxLength: 40 }), async (body, how, junk) => {
        const metric = `fuzz.${n++}`;
        const b = body as { samples?: object[]; series?: object[]; extra?: unknown };
        const withMetric = {
          ...(b.samples ? { samples: b.samples.map((s) => ({ metric, ...s })) } : {}),
          ...(b.series ? { series: b.series.map((s) => ({ metric, ...s })) } : {}),
          ...(b.extra !== undefined ? { extra: b.extra } : {}),
        };
        const [type, payload]: [string, string | Uint8Array] =
          how === 'json'
            ? ['application/json', JSON.stringify(withMetric)]
            : how === 'msgpack'
              ? ['application/msgpack', msgpack.pack(withMetric)]
              : how === 'ndjson'
                ? ['application/x-ndjson', (withMetric.samples ?? []).map((s) => JSON.stringify(s)).join('\n') + `\n${junk}`]
                : ['application/json', junk];
        const r = await fetch(`${s4.url}/v1/write`, { method: 'POST', headers: { 'content-type': type }, body: payload });
        const text = await r.text();
        expect(r.status, text).toBeLessThan(500);
        if (r.status === 204) accepted++;
        else {
          const q = await fetch(`${s4.url}/v1/series?metric=${encodeURIComponent(metric)}&from=0&to=${H0 + 7 * 3_600_000}`);
          expect(q.status).toBe(200);
          expect(((await q.json()) as { series: unknown[] }).series, `${metric} after ${r.status}: ${text}`).toEqual([]);
        }
      }),
      { numRuns: 300 },
    );
    // The generator must reach the accepting path too, or the property says little.
    expect(accepted).toBeGreaterThan(50);
  });

  it('queries, latest, series and admin calls', async () => {
    const value = fc.oneof(fc.string({ maxLength: 12 }), fc.integer().map(String), fc.constantFrom('1h', '0', '-5', '1e309', 'NaN', '2026-01-03T00:00:00Z', 'fuzz.1', 'value', 'constructor', '__proto__', 'avg,max', 'csv', 'msgpack'));
    const param = fc.tuple(fc.constantFrom('metric', 'tag', 'from', 'to', 'fields', 'format', 'step', 'agg', 'groupBy', 'maxPoints', 'limit', '__proto__'), value);
    const path = fc.constantFrom('/v1/query', '/v1/latest', '/v1/series', '/v1/query', '/healthz', '/readyz', '/metrics', '/openapi.json', '/v1/admin/nope', '/v1/../v1/query');
    await fc.assert(
      fc.asyncProperty(path, fc.array(param, { maxLength: 8 }), fc.boolean(), fc.jsonValue({ maxDepth: 3 }), async (p, params, asPost, body) => {
        const qs = new URLSearchParams(params.map(([k, v]) => [k, v] as [string, string])).toString();
        const r =
          asPost && p === '/v1/query'
            ? await fetch(`${s4.url}${p}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
            : await fetch(`${s4.url}${p}?${qs}`);
        const text = await r.text();
        expect(r.status, `${p}?${qs}: ${text.slice(0, 300)}`).toBeLessThan(500);
      }),
      { numRuns: 400 },
    );
    // A sane query still answers after all of that.
    expect((await fetch(`${s4.url}/v1/query?metric=fuzz.1&from=0&to=${H0 + 7 * 3_600_000}`)).status).toBe(200);
    for (const admin of ['flush', 'rollup']) expect((await fetch(`${s4.url}/v1/admin/${admin}`, { method: 'POST' })).status).toBe(200);
  });
});
