// An agent's connections (credentials its runs resolve): create, deactivate or activate, delete. Secrets go in
// once and are never shown again: the list says only which are set.
import { useState, type FormEvent } from 'react';
import { api, unwrap, type RequestBody, type Schemas } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ConfirmButton, ErrorLine, Field, Loaded, Time, useAction } from './ui.tsx';

type Kind = Schemas['Connection']['type'];

export function Connections({ agentId, manage }: { agentId: number; manage: boolean }) {
  const id = String(agentId);
  const list = useLoad(() => unwrap(api.GET('/api/admin/agents/{id}/connections', { params: { path: { id: Number(id) } } })), [id]);
  const action = useAction();
  const setActive = (c: Schemas['Connection']) => void action.run(() => unwrap(api.PATCH('/api/admin/connections/{id}', { params: { path: { id: c.id } }, body: { active: !c.active } })).then(list.reload));
  const remove = (c: Schemas['Connection']) => void action.run(() => unwrap(api.DELETE('/api/admin/connections/{id}', { params: { path: { id: c.id } } })).then(list.reload));
  return (
    <section aria-labelledby="connections-title">
      <h2 id="connections-title">Connections</h2>
      <ErrorLine error={action.error} />
      <Loaded load={list} isEmpty={(l) => l.data.length === 0} empty="No connections.">
        {(l) => (
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">Integration</th><th scope="col">Type</th><th scope="col">State</th><th scope="col">Updated</th>{manage && <th scope="col"><span className="sr-only">Actions</span></th>}</tr></thead>
              <tbody>
                {l.data.map((c) => (
                  <tr key={c.id}>
                    <td className="mono">{c.integration_id}</td>
                    <td>{c.type}</td>
                    <td>{c.active ? 'active' : 'inactive'}</td>
                    <td><Time iso={c.updated_at} /></td>
                    {manage && (
                      <td className="actions">
                        <button type="button" disabled={action.busy} onClick={() => setActive(c)}>{c.active ? 'Deactivate' : 'Activate'}</button>
                        <ConfirmButton label="Delete" confirm="Confirm delete" onConfirm={() => remove(c)} disabled={action.busy} />
                      </td>
                    )}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
      {manage && <NewConnection agentId={id} created={list.reload} />}
    </section>
  );
}

function NewConnection({ agentId, created }: { agentId: string; created: () => void }) {
  const [type, setType] = useState<Kind>('api_key');
  const [v, setV] = useState<Record<string, string>>({});
  const action = useAction();
  const field = (name: string, label: string, secret = false) => (
    <Field key={name} label={label}>
      <input type={secret ? 'password' : 'text'} autoComplete="off" value={v[name] ?? ''} onChange={(e) => setV({ ...v, [name]: e.target.value })} />
    </Field>
  );
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    const filled = Object.fromEntries(Object.entries(v).filter(([, x]) => x.trim() !== ''));
    const body = { type, integration_id: filled.integration_id ?? '', ...filled } as RequestBody<'/api/admin/agents/{id}/connections', 'post'>;
    if (await action.run(() => unwrap(api.POST('/api/admin/agents/{id}/connections', { params: { path: { id: Number(agentId) } }, body })))) {
      setV({});
      created();
    }
  };
  return (
    <details className="card">
      <summary>New connection</summary>
      <form className="form-grid" onSubmit={(e) => void submit(e)} aria-label="New connection">
        {field('integration_id', 'Integration id')}
        <Field label="Type">
          <select value={type} onChange={(e) => setType(e.target.value as Kind)}>
            <option value="api_key">API key</option><option value="basic_auth">Basic auth</option><option value="oauth">OAuth</option>
          </select>
        </Field>
        {type === 'api_key' && field('value', 'API key', true)}
        {type === 'basic_auth' && [field('username', 'Username'), field('password', 'Password', true)]}
        {type === 'oauth' && [field('access_token', 'Access token', true), field('refresh_token', 'Refresh token', true), field('token_url', 'Token URL'), field('client_id', 'Client id'), field('client_secret', 'Client secret', true), field('scope', 'Scope')]}
        <button type="submit" className="primary" disabled={action.busy}>Create connection</button>
        <ErrorLine error={action.error} />
      </form>
    </details>
  );
}
