import { ValidationError } from '@s4/core';

/**
 * The validator names a problem by its place in the request it was handed (`samples[12].tags`);
 * a protocol endpoint renames that to the place in the body the client sent (`line 14.tags`).
 * Anything but a ValidationError passes through unchanged.
 */
export function remapIssues(e: unknown, pattern: RegExp, rename: (index: number, rest: string) => string): unknown {
  if (!(e instanceof ValidationError)) return e;
  return new ValidationError(
    e.issues.map((i) => {
      const m = pattern.exec(i.path);
      return m ? { path: rename(Number(m[1]), i.path.slice(m[0].length)), message: i.message } : i;
    }),
  );
}
