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
 * One slice of bulk work per turn of the event loop: pieces of bulk work in flight (two writes
 * of a scrape round, the hot tier's commits, the flusher's reads) take their turns one at a
 * time, in the order they asked, so the loop polls for requests after every slice. With a
 * `setImmediate` each, every piece in flight ran its slice in the same check phase, and a request
 * that arrived meanwhile waited for all of them (a median stall of 26–30 ms with 10 ms slices in
 * the cardinality bench); the same happened when an urgent request ended and woke them all.
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

/** Bulk work waiting for its turn, first come first served; `pumping` while a turn is scheduled. */
const turns: (() => void)[] = [];
let pumping = false;

/** Lets the first waiter go on, one per turn of the event loop (I/O is polled between turns). */
function pump(): void {
  // A handful of pieces wait at a time (the writes in flight, a commit, a flush's read): shift is cheap.
  const next = turns.shift();
  // Scheduled from inside the check phase, the next turn runs in the next iteration of the loop.
  if (turns.length > 0) setImmediate(pump);
  else pumping = false;
  next?.();
}

/** The event loop's next turn for one piece of bulk work: I/O callbacks, timers and the pieces that asked first run before it. */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    turns.push(resolve);
    if (!pumping) {
      pumping = true;
      setImmediate(pump);
    }
  });
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
    // Woken together (the urgent request ended, or their bounds ran out): back in the queue, one slice a turn.
    await nextTurn();
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
