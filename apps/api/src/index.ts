export { startServer, type RunningServer } from './server.js';
export { createRuntime, type Runtime } from './runtime.js';
