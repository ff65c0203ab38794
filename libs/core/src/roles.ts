/**
 * The roles of the one S4 image (`S4_ROLE`), kept here once: libs/config validates `S4_ROLE`
 * against ROLES, and the CDK app (infra/) derives its worker services from both lists.
 */

/**
 * The roles the app implements: `all` runs every role in one process, `api` serves HTTP only.
 * `ingest` consumes Kafka (S4_INGEST=kafka) and writes the hot tier.
 */
export const ROLES = ['all', 'api', 'segment', 'aggregate', 'compact', 'ingest'] as const;
export type Role = (typeof ROLES)[number];

/**
 * Roles that are planned, not built yet: the app refuses them as `S4_ROLE` and infra refuses to
 * deploy them. When one is built, add it to ROLES (and remove it here).
 */
export const PLANNED_ROLES = [] as const;
export type PlannedRole = (typeof PLANNED_ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}
