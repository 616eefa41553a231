// Sign in with a token (the admin token or a personal token): POST /api/session sets the ars_session cookie.
import { useState, type FormEvent } from 'react';
import { sessionApi, type SessionView } from '../api/session.ts';
import { ApiFailure } from '../api/client.ts';
import { navigate, useLocation } from '../lib/router.tsx';

export function SignIn({ signedIn }: { signedIn: (s: SessionView) => void }) {
  const { query } = useLocation();
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const s = await sessionApi.signIn(token.trim());
      signedIn(s);
      // Only a path of this console: never an absolute URL someone put in ?next= (open redirect).
      const next = query.get('next') ?? '/runs';
      navigate(next.startsWith('/') && !next.startsWith('//') && next !== '/sign-in' ? next : '/runs', { replace: true });
    } catch (err) {
      setError(err instanceof ApiFailure && err.status === 401 ? 'That token was not accepted. Check it and try again.' : `Sign-in failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="sign-in" id="main">
      <h1>Agent Run Service</h1>
      {query.get('reason') === 'session-ended' && (
        <p className="notice" role="status">Your session has ended (signed out elsewhere, expired or revoked). Sign in again to go on.</p>
      )}
      <form onSubmit={(e) => void submit(e)} className="card">
        <label htmlFor="token">Token</label>
        <input id="token" name="token" type="password" autoComplete="current-password" required value={token}
          onChange={(e) => setToken(e.target.value)} aria-describedby="token-help" aria-invalid={error ? true : undefined} />
        <p id="token-help" className="muted">The admin token printed at the first start, or your personal token (ars_user_…).</p>
        {error && <p className="field-error" role="alert">{error}</p>}
        <button type="submit" className="primary" disabled={busy || !token.trim()}>Sign in</button>
      </form>
    </main>
  );
}
