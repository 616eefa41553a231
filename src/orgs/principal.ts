// Who a request to the admin API speaks for, and what that lets it do (issue 14; docs/security.md "Roles").
//   - a platform admin (the admin token, or a user with platform_admin) does everything;
//   - an org admin (membership role `admin`) manages that organization's agents, keys, connections and actions;
//   - a member sees that organization's agents, runs, dashboard and audit, triggers and resumes runs.
// Another organization's resources do not exist for a user (404); an action beyond the role is 403.
import type { OrgRole } from './sessions-repo.ts';

export type { OrgRole } from './sessions-repo.ts';

export interface Principal {
  /** Null: the platform-admin token, which is nobody in particular. */
  userId: string | null;
  platformAdmin: boolean;
  /** The user's organizations and role in each (empty for the admin token). */
  roles: ReadonlyMap<string, OrgRole>;
}

export const ADMIN_TOKEN_PRINCIPAL: Principal = Object.freeze({ userId: null, platformAdmin: true, roles: new Map() });

/** The role a principal holds in an organization: `platform` above every org, null outside it. */
export function roleIn(p: Principal, orgId: string): 'platform' | OrgRole | null {
  if (p.platformAdmin) return 'platform';
  return p.roles.get(orgId.toLowerCase()) ?? null;
}

/** The organizations whose data the principal may see; null: every organization (a platform admin). */
export function visibleOrgIds(p: Principal): string[] | null {
  return p.platformAdmin ? null : [...p.roles.keys()];
}

/** For the lists' `scope` (admin/lists.ts): undefined sees everything. */
export function orgScope(p: Principal): { orgIds: string[] } | undefined {
  const orgIds = visibleOrgIds(p);
  return orgIds === null ? undefined : { orgIds };
}
