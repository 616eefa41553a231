// /agents: the agents the user can see; "New agent" for those who manage an organization.
import { api, unwrap } from '../api/client.ts';
import { useAccess } from '../lib/session.tsx';
import { Link, navigate, setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Loaded, StatusBadge, Time } from '../components/ui.tsx';
import { Pager, usePager } from '../components/Pager.tsx';
import { rememberAgents } from '../lib/agents.ts';
import { Filters } from '../components/Filters.tsx';

export function Agents() {
  const access = useAccess();
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const q = query.get('q') ?? '';
  const pager = usePager();
  const { cursor } = pager;
  // Issue 40 item 1: a page of 50 at a time, searched by the service (every agent is reachable, not the newest 200).
  const agents = useLoad(async () => {
    const page = await unwrap(api.GET('/api/admin/agents', {
      params: { query: { limit: '50', ...(status ? { status: status as 'active' } : {}), ...(q ? { q } : {}), ...(cursor ? { cursor } : {}) } },
    }));
    rememberAgents(page.data);
    return page;
  }, [status, q, cursor]);
  const filter = (values: Record<string, string>) => {
    pager.setBack([]);
    setQuery({ status, q, ...values });
  };
  const mayCreate = access.platformAdmin || (access.managedOrgs?.length ?? 0) > 0;
  return (
    <section aria-labelledby="agents-title">
      <div className="title-row">
        <h1 id="agents-title">Agents</h1>
        {mayCreate && <button type="button" className="primary" onClick={() => navigate('/agents/new')}>New agent</button>}
      </div>
      <Filters label="Filter agents" active={[q, status].filter(Boolean).length}>
        <Field label="Name contains">
          <input type="search" defaultValue={q} maxLength={320} onBlur={(e) => filter({ q: e.target.value.trim() })}
            onKeyDown={(e) => e.key === 'Enter' && filter({ q: e.currentTarget.value.trim() })} />
        </Field>
        <Field label="Status">
          <select value={status} onChange={(e) => filter({ status: e.target.value })}>
            <option value="">Any status</option>
            <option>active</option><option>paused</option><option>archived</option>
          </select>
        </Field>
      </Filters>
      <Loaded load={agents} isEmpty={(p) => p.data.length === 0} empty={q || status ? 'No agent matches.' : 'No agents yet.'}>
        {(p) => (
          <>
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Organization</th><th scope="col">Managed by</th><th scope="col">Output kind</th><th scope="col">Status</th><th scope="col">Created</th></tr></thead>
              <tbody>
                {p.data.map((a) => (
                  <tr key={a.id}>
                    <td><Link to={`/agents/${a.id}`}>{a.name}</Link></td>
                    <td>{access.orgName(a.org_id)}</td>
                    <td>{a.managed_by}</td>
                    <td>{a.output_kind}</td>
                    <td><StatusBadge status={a.status} /></td>
                    <td><Time iso={a.created_at} /></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager pager={pager} next={p.next_cursor} />
          </>
        )}
      </Loaded>
    </section>
  );
}
