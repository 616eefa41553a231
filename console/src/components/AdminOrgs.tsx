// Organizations: create one; list its members (users of the org) and add or remove them.
import { useState, type FormEvent } from 'react';
import { api, unwrap } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ConfirmButton, ErrorLine, Field, Loaded, Time, useAction } from './ui.tsx';

export function AdminOrgs() {
  const orgs = useLoad(() => unwrap(api.GET('/api/admin/orgs', { params: { query: { limit: '200' } } })), []);
  const [name, setName] = useState('');
  const action = useAction();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    if (await action.run(() => unwrap(api.POST('/api/admin/orgs', { body: { name: name.trim() } })))) {
      setName('');
      orgs.reload();
    }
  };
  return (
    <>
      <form className="inline-form card" onSubmit={(e) => void create(e)} aria-label="New organization">
        <Field label="Organization name"><input required maxLength={200} value={name} onChange={(e) => setName(e.target.value)} /></Field>
        <button type="submit" className="primary" disabled={action.busy}>Create organization</button>
        <ErrorLine error={action.error} />
      </form>
      <Loaded load={orgs} isEmpty={(p) => p.data.length === 0} empty="No organizations yet.">
        {(p) => <ul className="plain">{p.data.map((o) => <Org key={o.id} id={o.id} name={o.name} created={o.created_at} />)}</ul>}
      </Loaded>
    </>
  );
}

function Org({ id, name, created }: { id: string; name: string; created: string }) {
  const members = useLoad(() => unwrap(api.GET('/api/admin/users', { params: { query: { org_id: id, limit: '200' } } })), [id]);
  const [userId, setUserId] = useState('');
  const [role, setRole] = useState<'member' | 'admin'>('member');
  const action = useAction();
  const add = async (e: FormEvent) => {
    e.preventDefault();
    if (await action.run(() => unwrap(api.POST('/api/admin/orgs/{id}/members', { params: { path: { id } }, body: { user_id: userId.trim(), role } })))) {
      setUserId('');
      members.reload();
    }
  };
  const remove = (user: string) => void action.run(() => unwrap(api.DELETE('/api/admin/orgs/{orgId}/members/{userId}', { params: { path: { orgId: id, userId: user } } })).then(members.reload));
  return (
    <li className="card">
      <h2>{name}</h2>
      <p className="muted mono">{id} · created <Time iso={created} /></p>
      <ErrorLine error={action.error} />
      <Loaded load={members} isEmpty={(m) => m.data.length === 0} empty="No members.">
        {(m) => (
          <ul className="plain">
            {m.data.map((u) => (
              <li key={u.id} className="row">
                <span>{u.name ?? u.email} <span className="muted">{u.email}</span></span>
                <ConfirmButton label="Remove" confirm="Confirm remove" onConfirm={() => remove(u.id)} disabled={action.busy} />
              </li>
            ))}
          </ul>
        )}
      </Loaded>
      <form className="inline-form" onSubmit={(e) => void add(e)} aria-label={`Add a member to ${name}`}>
        <Field label="User id"><input required pattern="[0-9a-fA-F-]{36}" value={userId} onChange={(e) => setUserId(e.target.value)} /></Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.target.value as 'member' | 'admin')}><option>member</option><option>admin</option></select>
        </Field>
        <button type="submit" disabled={action.busy}>Add member</button>
      </form>
    </li>
  );
}
