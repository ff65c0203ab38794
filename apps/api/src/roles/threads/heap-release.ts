import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** A pass that ran at least this long allocated enough to leave pages worth giving back. */
const HEAVY_PASS_MS = 200;
/** Heap committed beyond the thread's size when it became ready that is worth giving back whatever the pass took. */
const GROWN_BYTES = 32 * 2 ** 20;

type Collect = (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;

/**
 * Gives a role thread's heap back to the OS when the thread goes idle after a heavy pass.
 *
 * V8 keeps the pages a collection frees in a pool of the isolate, resident, for its next
 * allocations (`--trace-gc` prints them as "pooled"), and collects an idle isolate's heap only
 * after its memory reducer's delay, if ever. A role thread is idle between passes for most of its
 * life, so every thread kept the heap of its heaviest pass: on the cardinality bench the segment,
 * compact and aggregate threads held 107, 132 and 159 MB of heap (half of it garbage) plus their
 * pools when the process reached its peak RSS, each one's peak at a different moment, summed.
 * A "last resort" full collection is the one that also shrinks the heap and empties the pool
 * (a thread that churned 138 MB: 595 → 78 MB RSS). It runs on the role thread, never on the HTTP
 * thread, while nothing waits for it.
 *
 * V8 offers that collection only through `gc()`. The flag that exposes it is set when the first
 * role thread starts and left set: setting it back would race the other role threads starting at the same
 * moment (one of them fetched nothing). It only adds `gc` to contexts made after it (role threads
 * started later); the HTTP thread's global was made before.
 */
export class HeapRelease {
  private readonly collect: Collect | null;
  private readonly readyBytes: number;

  constructor() {
    this.collect = fetchCollect();
    this.readyBytes = getHeapStatistics().total_heap_size;
  }

  /** After a pass: collect and shrink the heap if the pass was heavy or the heap grew. */
  afterPass(passMs: number): void {
    if (!this.collect) return;
    if (passMs < HEAVY_PASS_MS && getHeapStatistics().total_heap_size < this.readyBytes + GROWN_BYTES) return;
    this.collect({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  }
}

function fetchCollect(): Collect | null {
  const exposed: unknown = (globalThis as { gc?: unknown }).gc; // started with --expose-gc
  if (typeof exposed === 'function') return exposed as Collect;
  try {
    setFlagsFromString('--expose-gc');
    const collect: unknown = runInNewContext('gc');
    return typeof collect === 'function' ? (collect as Collect) : null;
  } catch {
    return null; // a runtime without the flag: the thread keeps its heap as before
  }
}
