// Signing in and out (/api/session): the service sets and clears the HttpOnly ars_session cookie itself.
import { api, EMPTY, unwrap, type Schemas } from './client.ts';

export type SessionView = Schemas['Session'];

export const sessionApi = {
  current: () => unwrap(api.GET('/api/session')),
  signIn: (token: string) => unwrap(api.POST('/api/session', { body: { token } })),
  signOut: () => unwrap(api.DELETE('/api/session', { body: EMPTY })),
};
