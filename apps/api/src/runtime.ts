/**
 * Runtime settings that only take effect when a process starts: V8's young-generation size is
 * fixed when the main isolate is created, and glibc reads its malloc tuning from the environment
 * before any JavaScript runs. So the server entry re-executes itself once, in place (same process
 * id, signals and file descriptors: `process.execve`), with them set.
 *
 * - `--max-semi-space-size=32`: V8 sizes the HTTP thread's young generation from the host's RAM
 *   (64 MB semi-spaces, 128 MB resident, on a 24 GB host), which a write-heavy process fills and
 *   keeps. 32 MB costs no measurable CPU on the records workload; 16 MB saved another ~30 MB but
 *   grew the HTTP thread's GC time by 60 % (request objects promoted before their write is
 *   acknowledged). The role threads get their young generation through resourceLimits.
 * - `MALLOC_ARENA_MAX=2`: glibc gives each thread its own arenas, which keep freed memory; four
 *   isolates each allocating and freeing hot-tier logs, request bodies and segment buffers spread
 *   across them.
 * - `MALLOC_MMAP_THRESHOLD_=131072`: glibc raises its mmap threshold to the size of every large
 *   block freed (up to 32 MB), after which buffers of that size come from the arenas and their
 *   memory stays with the process once freed; a fixed threshold returns it.
 *
 * Skipped where `process.execve` is missing (Node < 22.15, Windows), when S4_RUNTIME_TUNING is
 * false, and for any setting the operator already chose (a semi-space flag on the command line or
 * in NODE_OPTIONS, a MALLOC_* variable set).
 */
const SEMI_SPACE_FLAG = '--max-semi-space-size';
const SEMI_SPACE_MB = 32;
const MALLOC_ENV: Readonly<Record<string, string>> = { MALLOC_ARENA_MAX: '2', MALLOC_MMAP_THRESHOLD_: '131072' };

/** Re-executes the process with the settings above when they are missing; returns only when it does not. */
export function tuneRuntime(enabled: boolean, environment: Readonly<Record<string, string | undefined>>): void {
  if (!enabled || typeof process.execve !== 'function' || process.platform === 'win32') return;
  // The flag also marks a process that was re-executed already, so this never loops.
  const options = [...process.execArgv, ...(environment.NODE_OPTIONS ?? '').split(/\s+/)];
  if (options.some((a) => a === SEMI_SPACE_FLAG || a.startsWith(`${SEMI_SPACE_FLAG}=`))) return;
  const env = { ...environment };
  for (const [k, v] of Object.entries(MALLOC_ENV)) env[k] ??= v;
  process.execve(process.execPath, [process.execPath, `${SEMI_SPACE_FLAG}=${SEMI_SPACE_MB}`, ...process.execArgv, ...process.argv.slice(1)], env);
}
