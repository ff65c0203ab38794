export { startServer, type RunningServer } from './server.js';
export { startRoles, type ProcessRoles } from './roles/process.js';
export type { RoleThread } from './roles/threads/role-thread.js';
export type { WorkerRole } from './roles/threads/wire.js';
