// /api/session (issue 14): the console signs in with a token and gets a session cookie; sign-out ends it.
//   POST   {token} → 201 the session view, Set-Cookie ars_session (HttpOnly, SameSite=Lax, Secure under https)
//   GET    → 200 who is signed in (the cookie, or a bearer token), 401 otherwise
//   DELETE → 204, the session ended and the cookie cleared (also when there was none)
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../errors.ts';
import { documentRoutes } from '../http/openapi-routes.ts';
import { requires } from '../http/openapi-document.ts';
import { answer, noBody, NO_STORE } from '../schemas/responses.ts';
import { crossOriginRefusal, originOf } from '../http/same-origin.ts';
import { SESSION_COOKIE, sessionCookie, signedInToAdmin, signsInByCookie } from '../orgs/user-auth.ts';
import { sessionView, signIn, signOut } from '../orgs/sessions.ts';
import { Session } from './admin/views.ts';
import { OPERATION_NEEDS } from './admin/access.ts';

const SignInBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 512, description: 'The admin token or a personal token (`ars_user_…`).' }) },
  { additionalProperties: false },
);

export default async function sessionRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const { config } = app.ctx;
  const platformOrigin = originOf(config.publicUrl);
  const ttlMs = config.sessionTtlHours * 3_600_000;
  const secure = config.publicUrl.startsWith('https:') ? '; Secure' : '';
  const cookie = (value: string, maxAgeS: number) => `${SESSION_COOKIE}=${value}; Path=/; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}${secure}`;
  documentRoutes(app, { tag: 'session', security: [{}, requires('sessionCookie'), requires('userToken'), requires('adminToken')], errors: [] });

  // Login CSRF: another site must not sign the visitor in as someone else. A browser names the page that sent
  // the request (Origin, Sec-Fetch-Site); a client that is not a browser sends neither and is let through.
  const refuseForeignPage = async (req: FastifyRequest) => {
    const { origin } = req.headers;
    const site = req.headers['sec-fetch-site'];
    if (origin === undefined && (site === undefined || site === 'none')) return;
    const refusal = crossOriginRefusal(req.method, req.headers, platformOrigin);
    if (refusal) throw new ApiError('forbidden', refusal);
  };

  const createSession = {
    operationId: 'createSession',
    summary: 'Sign in with a token: sets the ars_session cookie',
    body: SignInBody,
    response: { 201: answer(Session, 'Signed in; the cookie is set.', { 'set-cookie': { description: '`ars_session=…; Path=/; HttpOnly; SameSite=Lax; Max-Age=…` (and `Secure` under https).', type: 'string' }, ...NO_STORE }) },
    errors: ['unauthorized', 'forbidden'] as const,
  };
  app.post('/api/session', { schema: createSession, onRequest: refuseForeignPage }, async (req, reply) => {
    const signedIn = await signIn(app.ctx, req.body.token, ttlMs);
    if (!signedIn) throw errors.unauthorized('not the admin token or a personal token');
    reply.header('set-cookie', cookie(signedIn.secret, Math.floor(ttlMs / 1000))).header('cache-control', 'no-store').code(201);
    return { ...signedIn.view, permissions: OPERATION_NEEDS };
  });

  const getSession = {
    operationId: 'getSession',
    summary: 'Who is signed in: the user, their organizations and roles, and when the session ends',
    response: { 200: answer(Session, 'Signed in.', NO_STORE) },
    errors: ['unauthorized'] as const,
  };
  app.get('/api/session', { schema: getSession }, async (req, reply) => {
    const who = await signedInToAdmin(app.ctx, req.headers.authorization, req.headers.cookie);
    if (!who) throw errors.unauthorized('not signed in');
    reply.header('cache-control', 'no-store');
    return { ...(await sessionView(app.ctx, who)), permissions: OPERATION_NEEDS };
  });

  const deleteSession = {
    operationId: 'deleteSession',
    summary: 'Sign out: ends the session and clears the cookie',
    response: { 204: noBody('Signed out (also when no session was open).') },
    errors: ['forbidden'] as const,
  };
  app.delete('/api/session', { schema: deleteSession }, async (req, reply: FastifyReply) => {
    const secret = sessionCookie(req.headers.cookie);
    if (secret !== null && signsInByCookie(req.headers.authorization, req.headers.cookie)) {
      const refusal = crossOriginRefusal(req.method, req.headers, platformOrigin);
      if (refusal) throw new ApiError('forbidden', refusal);
      await signOut(app.ctx, secret);
    }
    reply.header('set-cookie', cookie('', 0)).code(204);
  });
}
