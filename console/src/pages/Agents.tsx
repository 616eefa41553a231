// /agents: the agents the user can see; "New agent" for those who manage an organization.
import { api, unwrap } from '../api/client.ts';
import { useAccess } from '../lib/session.tsx';
import { Link, navigate, setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Loaded, StatusBadge, Time } from '../components/ui.tsx';

export function Agents() {
  const access = useAccess();
  const { query } = useLocation();
  const status = query.get('status') ?? '';
  const agents = useLoad(
    () => unwrap(api.GET('/api/admin/agents', { params: { query: { limit: '200', ...(status ? { status: status as 'active' } : {}) } } })),
    [status],
  );
  const mayCreate = access.platformAdmin || (access.managedOrgs?.length ?? 0) > 0;
  return (
    <section aria-labelledby="agents-title">
      <div className="title-row">
        <h1 id="agents-title">Agents</h1>
        {mayCreate && <button type="button" className="primary" onClick={() => navigate('/agents/new')}>New agent</button>}
      </div>
      <form className="filters" aria-label="Filter agents" onSubmit={(e) => e.preventDefault()}>
        <Field label="Status">
          <select value={status} onChange={(e) => setQuery({ status: e.target.value })}>
            <option value="">Any status</option>
            <option>active</option><option>paused</option><option>archived</option>
          </select>
        </Field>
      </form>
      <Loaded load={agents} isEmpty={(p) => p.data.length === 0} empty="No agents yet.">
        {(p) => (
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
        )}
      </Loaded>
    </section>
  );
}
