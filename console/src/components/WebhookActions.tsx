// An agent's webhook actions (a URL called when a run reaches a state). The signing secret is shown once, at creation.
import { useState, type FormEvent } from 'react';
import { api, unwrap, type Schemas } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ConfirmButton, ErrorLine, Field, Loaded, Secret, Time, useAction } from './ui.tsx';

type OnState = Schemas['WebhookAction']['on_state'];

export function WebhookActions({ agentId, manage }: { agentId: number; manage: boolean }) {
  const id = String(agentId);
  const list = useLoad(() => unwrap(api.GET('/api/admin/agents/{id}/webhook-actions', { params: { path: { id: Number(id) } } })), [id]);
  const [url, setUrl] = useState('');
  const [onState, setOnState] = useState<OnState>('completed');
  const [secret, setSecret] = useState<string | null>(null);
  const action = useAction();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    await action.run(async () => {
      const made = await unwrap(api.POST('/api/admin/agents/{id}/webhook-actions', { params: { path: { id: Number(id) } }, body: { url: url.trim(), on_state: onState } }));
      setSecret(made.signing_secret);
      setUrl('');
      list.reload();
    });
  };
  const remove = (actionId: string) => void action.run(() => unwrap(api.DELETE('/api/admin/webhook-actions/{id}', { params: { path: { id: actionId } } })).then(list.reload));
  return (
    <section aria-labelledby="hooks-title">
      <h2 id="hooks-title">Webhook actions</h2>
      <p className="muted">Each run's deliveries (attempts, last error, Redeliver) are on the run's page.</p>
      <ErrorLine error={action.error} />
      {secret && <p className="notice">Signing secret, shown once: <Secret value={secret} label="Signing secret" /></p>}
      <Loaded load={list} isEmpty={(l) => l.data.length === 0} empty="No webhook actions.">
        {(l) => (
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">When the run is</th><th scope="col">URL</th><th scope="col">Created</th>{manage && <th scope="col"><span className="sr-only">Actions</span></th>}</tr></thead>
              <tbody>
                {l.data.map((w) => (
                  <tr key={w.id}>
                    <td>{w.on_state}</td>
                    <td className="mono wrap">{w.url}</td>
                    <td><Time iso={w.created_at} /></td>
                    {manage && <td><ConfirmButton label="Delete" confirm="Confirm delete" onConfirm={() => remove(w.id)} disabled={action.busy} /></td>}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loaded>
      {manage && (
        <form className="form-grid card" onSubmit={(e) => void create(e)} aria-label="New webhook action">
          <Field label="URL"><input type="url" required value={url} onChange={(e) => setUrl(e.target.value)} /></Field>
          <Field label="When the run is">
            <select value={onState} onChange={(e) => setOnState(e.target.value as OnState)}>
              <option>completed</option><option>failed</option><option>cancelled</option><option>waiting</option>
            </select>
          </Field>
          <button type="submit" className="primary" disabled={action.busy}>Add webhook action</button>
        </form>
      )}
    </section>
  );
}
