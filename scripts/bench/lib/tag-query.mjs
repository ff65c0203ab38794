// What the tag-query probes share (index-tagquery.mjs embedded, index-tagredis.mjs Redis + S3):
// the cardinality bench's queries over a kept data set, and the server's HTTP-thread CPU.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { waitHttp } from './http.mjs';
import { start, stop } from './proc.mjs';

/**
 * The bench's 1 % tag query (node_m0, host=~host-[0-9]*00) and the warm-up queries the ingest's
 * probes ran (a single series, a label listing), over the data's range: from the first sample to
 * the end of the last window the catalogs under `catDir` (…/v1/bench/cat) list.
 */
export function benchQueries(base, catDir, decodeCatalog) {
  let from = Infinity;
  let to = -Infinity;
  for (const shard of readdirSync(catDir))
    if (/^\d+$/.test(shard))
      for (const f of readdirSync(join(catDir, shard)))
        if (f.endsWith('.s4cat'))
          for (const e of decodeCatalog(new Uint8Array(readFileSync(join(catDir, shard, f)))).entries) {
            from = Math.min(from, e.minTs);
            to = Math.max(to, e.window + 3_600_000);
          }
  const tagUrl = `${base}/v1/query?${new URLSearchParams({ metric: 'node_m0', match: 'host=~host-[0-9]*00', from: String(from), to: String(to), format: 'json' })}`;
  const warmups = [`${base}/v1/query?${new URLSearchParams({ metric: 'node_m0', tag: 'host:host-1999', from: String(from), to: String(to) })}`, `${base}/v1/labels?metric=node_m1`];
  return { from, to, tagUrl, warmups };
}

/**
 * CPU ms of the server's HTTP thread, the one that answers queries (the role threads' passes left
 * out), from the scheduler's count of nanoseconds on a CPU (/proc/…/schedstat: finer than the
 * 10 ms ticks of /proc/…/stat, which a query of a few ms would mostly not move).
 */
export function cpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8').split(' ')[0]) / 1e6;
}

/** Waits until the server's CPU rests (start-up passes of the workers done): 3 quiet half-seconds. */
export async function settle(pid) {
  for (let quiet = 0, last = cpuMs(pid), n = 0; quiet < 3 && n < 120; n++) {
    await new Promise((r) => setTimeout(r, 500));
    const now = cpuMs(pid);
    quiet = now - last <= 10 ? quiet + 1 : 0; // under 2 % of a core
    last = now;
  }
}

/**
 * S4 from `build` (its apps/api/dist/main.js) with `env`, ready and at rest; `warmed`: the warm-up
 * queries first (`rounds` of them, timed by `timed(url, pid)`), then `pauseMs` idle, as the bench's
 * rollup pass sits between its last probe and the tag query. Knob TQ_PROF=DIR: --cpu-prof into DIR.
 */
export async function startProbed({ build, env, log, base, warmed, warmups, rounds, pauseMs, timed }) {
  const prof = process.env.TQ_PROF ? ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${process.env.TQ_PROF}`] : [];
  const child = start(process.execPath, ['--max-old-space-size=12288', ...prof, join(build, 'apps/api/dist/main.js')], { env, log });
  try {
    await waitHttp(`${base}/readyz`, 60_000);
    await settle(child.pid);
    if (warmed) {
      for (let i = 0; i < rounds; i++) for (const u of warmups) await timed(u, child.pid);
      // Cached indexes are then older than their revalidation interval (5 s), as in the bench.
      await new Promise((r) => setTimeout(r, pauseMs));
      await settle(child.pid);
    }
    return child;
  } catch (e) {
    await stop(child);
    throw e;
  }
}
