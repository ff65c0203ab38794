/**
 * Precedence on a thread's event loop: short requests (a query, a health check) before bulk work
 * (a write of 40,000 series being checked, encoded and applied in slices).
 *
 * Bulk work gives the event loop a turn between slices, but a turn alone is not enough: a query
 * awaits tens of times (shards, catalog, footers, blocks), and each of its steps queued behind a
 * slice of every write in flight, so a single-series query took 370–500 ms while writes arrived
 * (10 ms per slice × two writes × tens of steps). So bulk work that takes its turn with
 * `bulkTurn()` also waits while a request marked with `urgentWork()` is in flight.
 *
 * Two bounds keep writes moving: a request has precedence for its first URGENT_MS only (a long
 * export or an admin pass then shares the thread as before), and one pause waits at most
 * MAX_WAIT_MS (a stream of queries cannot stop writes).
 *
 * The state is per thread (module state; each worker thread has its own), as the event loop is.
 */

/** How long a request keeps precedence over bulk work. */
export const URGENT_MS = 100;
/**
 * The longest one pause of bulk work waits for urgent requests. Against 10 ms slices this keeps a
 * third of the thread for writes under a steady stream of queries (a dashboard), and gives a query
 * of a few milliseconds the thread to itself.
 */
export const MAX_WAIT_MS = 20;

const urgent = new Set<{ readonly until: number }>();
const wakers = new Set<() => void>();

/** Marks a request as urgent until the returned function is called (calling it again does nothing). */
export function urgentWork(): () => void {
  const entry = { until: performance.now() + URGENT_MS };
  urgent.add(entry);
  return () => {
    if (urgent.delete(entry) && urgent.size === 0) for (const wake of [...wakers]) wake();
  };
}

/** The event loop's next turn: I/O callbacks and timers that wait (requests, health checks) run first. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** The next turn for bulk work: after it, while an urgent request is in flight, wait for it (bounded). */
export async function bulkTurn(): Promise<void> {
  await nextTurn();
  const start = performance.now();
  for (;;) {
    const now = performance.now();
    const left = Math.min(precedenceLeft(now), start + MAX_WAIT_MS - now);
    if (left <= 0) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wakers.delete(done);
        resolve();
      };
      const timer = setTimeout(done, Math.ceil(left));
      wakers.add(done);
    });
  }
}

/** Milliseconds until no request has precedence (0: none has now). A request past URGENT_MS loses it. */
function precedenceLeft(now: number): number {
  let left = 0;
  for (const e of urgent) {
    if (e.until <= now) urgent.delete(e);
    else left = Math.max(left, e.until - now);
  }
  return left;
}
