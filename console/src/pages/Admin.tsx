// /admin (platform admins): organizations and their members, users and their tokens, runtimes.
import { useAccess } from '../lib/session.tsx';
import { Link } from '../lib/router.tsx';
import { AdminOrgs } from '../components/AdminOrgs.tsx';
import { AdminUsers } from '../components/AdminUsers.tsx';
import { AdminRuntimes } from '../components/AdminRuntimes.tsx';

const TABS = [['orgs', 'Organizations'], ['users', 'Users'], ['runtimes', 'Runtimes']] as const;

export function Admin({ tab = 'orgs' }: { tab?: string }) {
  const access = useAccess();
  if (!access.platformAdmin) return <p className="notice">Only platform admins manage organizations, users and runtimes.</p>;
  return (
    <section aria-labelledby="admin-title">
      <h1 id="admin-title">Admin</h1>
      <nav aria-label="Admin sections" className="tabs">
        {TABS.map(([t, label]) => <Link key={t} to={`/admin/${t}`} aria-current={tab === t ? 'page' : undefined}>{label}</Link>)}
      </nav>
      {tab === 'orgs' && <AdminOrgs />}
      {tab === 'users' && <AdminUsers />}
      {tab === 'runtimes' && <AdminRuntimes />}
      {!TABS.some(([t]) => t === tab) && <p>No such section.</p>}
    </section>
  );
}
