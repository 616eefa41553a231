// ANY /zones/{agentId}/app/* → {zone_app_url}/* (zones.md "The proxy mints the zone JWT"). A signed-in user
// (personal token as bearer, or the ars_session cookie) who is a member of the agent's organization passes; every
// request carries a zone JWT minted for it alone. Bodies are streamed: this context parses nothing.
// A request the session cookie signs in passes the CSRF check first (http/same-origin.ts); answers come back
// sandboxed (response-headers.ts), and no zone app script can become a service worker of the platform origin.
// Registered twice (app.ts): at /zones/{agentId}/app for tokens and the cookie, and at
// /zones/{agentId}/framed/{pass} for the pages a browser opens with the cookie, which are sent there because the
// sandbox keeps the cookie off the app's own requests (zones/zone-frame-pass.ts).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { crossOriginRefusal, originOf } from '../../http/same-origin.ts';
import { signedInBy, signsInByCookie, userCredential } from '../../orgs/user-auth.ts';
import { framePass, userOfFramePass } from '../../zones/zone-frame-pass.ts';
import { passZoneProxy } from '../../zones/zone-proxy-access.ts';
import { createZoneProxyClient, upstreamUrl } from '../../zones/zone-proxy-client.ts';
import { forward, forwardedRequestHeaders } from './forward.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
import { rawAnswer } from '../../schemas/responses.ts';
import { Type } from 'typebox';

const ZONE_ANSWER = rawAnswer('The zone app’s own answer, streamed; its cookies and origin-wide headers are dropped and a sandbox Content-Security-Policy added.', '*/*', {});
const APP_PREFIX = /^\/zones\/([^/?#]+)\/app/;
const FRAMED_PREFIX = /^\/zones\/([^/?#]+)\/framed\/([^/?#]+)/;

export default async function zoneProxyRoutes(app: FastifyInstance, opts: { framed: boolean }): Promise<void> {
  documentRoutes(app, {
    tag: 'zones',
    // A framed address carries its own credential, the pass in the path.
    security: opts.framed ? [] : [requires('userToken'), requires('sessionCookie')],
    errors: ['unauthorized', 'forbidden', 'not_found', 'invalid_body', 'upstream_failed', 'upstream_timeout'],
    rawBodies: true,
  });
  // One per instance, for its keep-alive pool; the SSRF guard and answer cap of every tenant-set URL (issue 35).
  const client = createZoneProxyClient({ allowHosts: app.ctx.config.outboundAllowHosts, maxResponseBytes: app.ctx.config.zoneMaxResponseBytes });
  app.addHook('onClose', async () => client.close());
  // Leave every body on the socket: the handler pipes it to the zone app as it arrives.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  const platformOrigin = originOf(app.ctx.config.publicUrl);

  /** A page opened at /app with the session cookie goes on to its framed address, where the app's own requests work. */
  const framedAddress = (req: FastifyRequest, sessionId: string | undefined, agentId: number, rest: string): string | null => {
    if (!sessionId || req.method !== 'GET' || req.headers['sec-fetch-mode'] !== 'navigate') return null;
    const path = rest === '' || rest.startsWith('?') ? `/${rest}` : rest;
    return `/zones/${agentId}/framed/${framePass(app.ctx, sessionId, agentId)}${path}`;
  };

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    // Only a page of the platform origin could register one (an opaque-origin zone page cannot); never a zone app's script.
    if (req.headers['service-worker'] !== undefined) throw new ApiError('forbidden', 'a zone app cannot provide a service worker');
    const rawUrl = req.raw.url ?? '';
    const { authorization, cookie } = req.headers;
    let prefix: RegExpExecArray | null;
    let user: { id: string } | null = null;
    let sessionId: string | undefined;
    if (opts.framed) {
      // The pass in the path is the credential (not ambient like a cookie): a request without it cannot forge one.
      prefix = FRAMED_PREFIX.exec(rawUrl);
      const agentId = parseId(prefix?.[1]);
      user = agentId === null ? null : await userOfFramePass(app.ctx, prefix![2]!, agentId);
    } else {
      const byCookie = signsInByCookie(authorization, cookie);
      if (byCookie) {
        const refusal = crossOriginRefusal(req.method, req.headers, platformOrigin);
        if (refusal) throw new ApiError('forbidden', refusal);
      }
      prefix = APP_PREFIX.exec(rawUrl);
      const who = await signedInBy(app.ctx, userCredential(authorization, cookie), { adminToken: false, adminSessions: false });
      if (who?.userId) {
        user = { id: who.userId };
        if (byCookie) sessionId = who.session?.id;
      }
    }
    const pass = await passZoneProxy(app.ctx, parseId(prefix?.[1]), user);
    const rest = rawUrl.slice(prefix![0].length);
    const framed = opts.framed ? null : framedAddress(req, sessionId, pass.agentId, rest);
    if (framed) return reply.header('cache-control', 'no-store').redirect(framed, 303);
    const target = upstreamUrl(pass.zoneAppUrl, rest);
    if (!target) throw new ApiError('invalid_body', 'path must stay under the zone app: no . or .. segments, however encoded');
    return forward(client, req, reply, target, forwardedRequestHeaders(req, pass.zoneToken, prefix![0]), opts.framed);
  };
  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  const proxied = opts.framed ? {
    operationId: 'zoneAppProxyFramed',
    summary: 'The agent’s zone app in a console frame',
    description: 'As `/zones/{agentId}/app/{*}`, signed in by the pass in the path instead of the cookie. A browser page opened at `/zones/{agentId}/app/` with the session cookie is sent here (303): the zone answer’s sandbox keeps the cookie off the app’s own requests, and relative URLs keep the pass. The pass opens this agent’s zone app only, for the session’s user, until the session ends.',
    params: Type.Object({ agentId: Type.String(), pass: Type.String(), '*': Type.String({ description: 'The path under the zone app, forwarded as sent.' }) }),
    response: { default: ZONE_ANSWER },
  } : {
    operationId: 'zoneAppProxy',
    summary: 'The agent’s zone app, for a signed-in member',
    description: 'Forwards the request to `{zone_app_url}/{*}` with a fresh zone JWT in X-Zone-Token, never the user’s own credential or cookies. Writes signed in by the session cookie must come from the platform’s origin (CSRF). A page navigation signed in by the session cookie is answered 303 to its framed address (`/zones/{agentId}/framed/{pass}/{*}`).',
    params: Type.Object({ agentId: Type.String(), '*': Type.String({ description: 'The path under the zone app, forwarded as sent.' }) }),
    response: {
      303: rawAnswer('A page navigation signed in by the session cookie: go on to the framed address (Location).', 'text/plain', {}),
      default: ZONE_ANSWER,
    },
  };
  // The wildcard route documents the app's root too (`{*}` empty).
  app.route({ method: methods, url: '/', schema: { hide: true }, handler });
  app.route({ method: methods, url: '/*', schema: proxied, handler });
}
