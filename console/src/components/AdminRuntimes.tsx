// Runtimes (n8n or Trigger.dev): create and edit. The API key and alert secret are write-only.
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ErrorLine, Field, Loaded, useAction } from './ui.tsx';

type Runtime = Schemas['Runtime'];

export function AdminRuntimes() {
  const runtimes = useLoad(() => unwrap(api.GET('/api/admin/runtimes', { params: { query: { limit: '200' } } })), []);
  const orgs = useLoad(() => unwrap(api.GET('/api/admin/orgs', { params: { query: { limit: '200' } } })), []);
  const [editing, setEditing] = useState<Runtime | 'new' | null>(null);
  const orgName = (id: string) => orgs.data?.data.find((o) => o.id === id)?.name ?? id;
  return (
    <>
      {editing === null && <button type="button" className="primary" onClick={() => setEditing('new')}>New runtime</button>}
      {editing !== null && (
        <RuntimeForm runtime={editing === 'new' ? null : editing} orgs={orgs.data?.data ?? []} done={() => (setEditing(null), runtimes.reload())} />
      )}
      <Loaded load={runtimes} isEmpty={(p) => p.data.length === 0} empty="No runtimes yet.">
        {(p) => (
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Kind</th><th scope="col">Base URL</th><th scope="col">Organization</th><th scope="col">API key</th><th scope="col"><span className="sr-only">Actions</span></th></tr></thead>
              <tbody>
                {p.data.map((r) => (
                  <tr key={r.id}>
                    <td>{r.name}</td><td>{r.kind}</td><td className="mono wrap">{r.base_url}</td><td>{orgName(r.org_id)}</td>
                    <td>{r.api_key_set ? 'set' : 'not set'}</td>
                    <td><button type="button" onClick={() => setEditing(r)}>Edit</button></td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
    </>
  );
}

function RuntimeForm({ runtime, orgs, done }: { runtime: Runtime | null; orgs: Array<{ id: string; name: string }>; done: () => void }) {
  const [f, setF] = useState({ org_id: runtime?.org_id ?? '', name: runtime?.name ?? '', kind: runtime?.kind ?? 'workflow', base_url: runtime?.base_url ?? '', api_key: '', alert_secret: '' });
  const action = useAction();
  const set = (k: keyof typeof f, v: string) => setF((old) => ({ ...old, [k]: v }));
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    // Secrets left empty are not sent: editing keeps the stored ones.
    const secrets = { ...(f.api_key && { api_key: f.api_key }), ...(f.alert_secret && { alert_secret: f.alert_secret }) };
    const ok = await action.run(() => runtime
      ? unwrap(api.PATCH('/api/admin/runtimes/{id}', { params: { path: { id: runtime.id } }, body: { name: f.name, base_url: f.base_url, ...secrets } }))
      : unwrap(api.POST('/api/admin/runtimes', { body: { org_id: f.org_id, name: f.name, kind: f.kind as Runtime['kind'], base_url: f.base_url, ...secrets } })));
    if (ok) done();
  };
  return (
    <form className="form-grid card" onSubmit={(e) => void submit(e)} aria-label={runtime ? `Edit ${runtime.name}` : 'New runtime'}>
      <Field label="Organization">
        <select required value={f.org_id} disabled={runtime !== null} onChange={(e) => set('org_id', e.target.value)}>
          <option value="">Choose…</option>
          {orgs.map((o) => <option key={o.id} value={o.id}>{o.name}</option>)}
        </select>
      </Field>
      <Field label="Name"><input required value={f.name} onChange={(e) => set('name', e.target.value)} /></Field>
      <Field label="Kind">
        <select value={f.kind} disabled={runtime !== null} onChange={(e) => set('kind', e.target.value)}>
          <option value="workflow">Workflow (n8n)</option><option value="task">Task (Trigger.dev)</option>
        </select>
      </Field>
      <Field label="Base URL"><input type="url" required value={f.base_url} onChange={(e) => set('base_url', e.target.value)} /></Field>
      <Field label="API key"><input type="password" autoComplete="off" placeholder={runtime?.api_key_set ? 'set: leave empty to keep' : ''} value={f.api_key} onChange={(e) => set('api_key', e.target.value)} /></Field>
      <Field label="Alert secret"><input type="password" autoComplete="off" placeholder={runtime?.alert_secret_set ? 'set: leave empty to keep' : ''} value={f.alert_secret} onChange={(e) => set('alert_secret', e.target.value)} /></Field>
      <div className="actions">
        <button type="submit" className="primary" disabled={action.busy}>{runtime ? 'Save runtime' : 'Create runtime'}</button>
        <button type="button" onClick={done}>Close</button>
      </div>
      <ErrorLine error={action.error} />
    </form>
  );
}
