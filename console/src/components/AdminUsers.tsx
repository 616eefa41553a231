// Users: create one; give a user a personal token (shown once) and revoke tokens made here.
import { useState, type FormEvent } from 'react';
import { api, EMPTY, unwrap } from '../api/client.ts';
import { useLoad } from '../lib/useLoad.ts';
import { ConfirmButton, ErrorLine, Field, Loaded, Secret, useAction } from './ui.tsx';

export function AdminUsers() {
  const users = useLoad(() => unwrap(api.GET('/api/admin/users', { params: { query: { limit: '200' } } })), []);
  const [email, setEmail] = useState('');
  const [name, setName] = useState('');
  const [platformAdmin, setPlatformAdmin] = useState(false);
  const [tokens, setTokens] = useState<Record<string, { id: string; token: string }>>({});
  const action = useAction();
  const create = async (e: FormEvent) => {
    e.preventDefault();
    const body = { email: email.trim(), name: name.trim() || null, platform_admin: platformAdmin };
    if (await action.run(() => unwrap(api.POST('/api/admin/users', { body })))) {
      setEmail('');
      setName('');
      setPlatformAdmin(false);
      users.reload();
    }
  };
  const newToken = (userId: string) => void action.run(async () => {
    const t = await unwrap(api.POST('/api/admin/users/{id}/tokens', { params: { path: { id: userId } }, body: EMPTY }));
    setTokens((all) => ({ ...all, [userId]: t }));
  });
  const revoke = (userId: string, tokenId: string) => void action.run(async () => {
    await unwrap(api.DELETE('/api/admin/users/{id}/tokens/{tokenId}', { params: { path: { id: userId, tokenId } } }));
    setTokens(({ [userId]: _gone, ...rest }) => rest);
  });
  return (
    <>
      <form className="form-grid card" onSubmit={(e) => void create(e)} aria-label="New user">
        <Field label="Email"><input type="email" required value={email} onChange={(e) => setEmail(e.target.value)} /></Field>
        <Field label="Name"><input value={name} onChange={(e) => setName(e.target.value)} /></Field>
        <label className="check"><input type="checkbox" checked={platformAdmin} onChange={(e) => setPlatformAdmin(e.target.checked)} /> Platform admin</label>
        <button type="submit" className="primary" disabled={action.busy}>Create user</button>
      </form>
      <ErrorLine error={action.error} />
      <Loaded load={users} isEmpty={(p) => p.data.length === 0} empty="No users yet.">
        {(p) => (
          <div className="table-wrap">
            <table>
              <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Id</th><th scope="col">Platform admin</th><th scope="col">Token</th></tr></thead>
              <tbody>
                {p.data.map((u) => (
                  <tr key={u.id}>
                    <td>{u.name ?? '—'}</td>
                    <td>{u.email}</td>
                    <td className="mono">{u.id}</td>
                    <td>{u.platform_admin ? 'yes' : 'no'}</td>
                    <td>
                      {tokens[u.id] ? (
                        <>
                          <Secret value={tokens[u.id]!.token} label={`Token for ${u.email}`} />
                          <ConfirmButton label="Revoke" confirm="Confirm revoke" onConfirm={() => revoke(u.id, tokens[u.id]!.id)} disabled={action.busy} />
                        </>
                      ) : <button type="button" disabled={action.busy} onClick={() => newToken(u.id)}>New token</button>}
                    </td>
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
