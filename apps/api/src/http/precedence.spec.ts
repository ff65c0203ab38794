import Fastify from 'fastify';
import { bulkTurn } from '@s4/core';
import { describe, expect, it } from 'vitest';
import { installPrecedence } from './precedence.js';

/** Which settles first: a bulk turn taken now, or a 5 ms timer. */
async function bulkBeforeTimer(): Promise<boolean> {
  let timer!: ReturnType<typeof setTimeout>;
  const first = await Promise.race([bulkTurn().then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), 5)))]);
  clearTimeout(timer);
  return first;
}

describe('installPrecedence', () => {
  it('holds bulk work back while a query is in flight, not while a write is, and lets go when the query ends', async () => {
    const fastify = Fastify();
    installPrecedence(fastify);
    let release!: () => void;
    let entered!: () => void;
    const inside = () => new Promise<void>((r) => (entered = r));
    const handler = async () => {
      entered();
      await new Promise<void>((r) => (release = r));
      return 'ok';
    };
    fastify.get('/v1/query', handler);
    fastify.post('/v1/write', handler);
    try {
      let started = inside();
      const query = fastify.inject({ method: 'GET', url: '/v1/query?metric=m' });
      await started;
      expect(await bulkBeforeTimer()).toBe(false);
      release();
      expect((await query).statusCode).toBe(200);
      expect(await bulkBeforeTimer()).toBe(true);

      started = inside();
      const write = fastify.inject({ method: 'POST', url: '/v1/write?x=1', payload: {} });
      await started;
      expect(await bulkBeforeTimer()).toBe(true);
      release();
      expect((await write).statusCode).toBe(200);
    } finally {
      await fastify.close();
    }
  });
});
