// Who is signed in, and what their role lets them do: pages hide the controls a role cannot use (the API refuses
// them anyway, 403). Platform admins manage everything; an org admin manages their orgs' agents; members see and run.
import { createContext, useContext } from 'react';
import type { SessionView } from '../api/session.ts';

/** An admin operation as the API's access table names it: `METHOD /path` under /api/admin. */
export type Operation = string;

export interface Access {
  session: SessionView;
  platformAdmin: boolean;
  /**
   * May call this admin operation on a resource of this organization (issue 40 item 2): what the session's
   * `permissions` (the API's own access table) say it needs, against the user's role there. Screens leave out what
   * this refuses rather than showing a control the API would answer 403.
   */
  may: (operation: Operation, orgId: string) => boolean;
  /** May change this org's agents, keys, connections and webhook actions. */
  canManage: (orgId: string) => boolean;
  /** The orgs the user may create agents in (all for a platform admin: null). */
  managedOrgs: string[] | null;
  orgName: (orgId: string) => string;
  signOut: () => void;
}

export const SessionContext = createContext<Access | null>(null);

/** `orgNames`: every org's name, for platform admins (who belong to none, yet see all). */
export function accessOf(session: SessionView, signOut: () => void, orgNames: Map<string, string> = new Map()): Access {
  const platformAdmin = session.user.platform_admin;
  const admins = session.memberships.filter((m) => m.role === 'admin').map((m) => m.org_id);
  const may = (operation: Operation, orgId: string): boolean => {
    if (platformAdmin) return true;
    const role = session.memberships.find((m) => m.org_id === orgId)?.role;
    switch (session.permissions[operation]) {
      case 'member':
        return role !== undefined;
      case 'org_admin':
        return role === 'admin';
      default:
        return false; // a platform operation, or one the table does not list
    }
  };
  return {
    session,
    platformAdmin,
    may,
    canManage: (orgId) => may('PATCH /agents/:id', orgId),
    managedOrgs: platformAdmin ? null : admins,
    orgName: (orgId) => session.memberships.find((m) => m.org_id === orgId)?.org_name ?? orgNames.get(orgId) ?? orgId,
    signOut,
  };
}

export function useAccess(): Access {
  const access = useContext(SessionContext);
  if (!access) throw new Error('useAccess outside a signed-in page');
  return access;
}
