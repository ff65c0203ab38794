/** Injection token of the Runtime (the engine wired from config). */
export const RUNTIME = Symbol('S4_RUNTIME');
