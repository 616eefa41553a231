// ANY /zones/{agentId}/app/* → {zone_app_url}/* (zones.md "The proxy mints the zone JWT"). A signed-in user
// (personal token as bearer, or the ars_session cookie) who is a member of the agent's organization passes; every
// request carries a zone JWT minted for it alone. Bodies are streamed: this context parses nothing.
// A request the session cookie signs in passes the CSRF check first (http/same-origin.ts); answers come back
// sandboxed (response-headers.ts), and no zone app script can become a service worker of the platform origin.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { crossOriginRefusal, originOf } from '../../http/same-origin.ts';
import { signsInByCookie, userCredential } from '../../orgs/user-auth.ts';
import { passZoneProxy } from '../../zones/zone-proxy-access.ts';
import { createZoneProxyClient, upstreamUrl } from '../../zones/zone-proxy-client.ts';
import { forward, forwardedRequestHeaders } from './forward.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
import { rawAnswer } from '../../http/openapi-components.ts';
import { Type } from 'typebox';

const PREFIX = /^\/zones\/([^/?#]+)\/app/;

export default async function zoneProxyRoutes(app: FastifyInstance): Promise<void> {
  documentRoutes(app, {
    tag: 'zones',
    security: [requires('userToken'), requires('sessionCookie')],
    errors: ['unauthorized', 'forbidden', 'not_found', 'invalid_body', 'upstream_failed', 'upstream_timeout'],
    rawBodies: true,
  });
  const client = createZoneProxyClient(); // one per instance, for its keep-alive pool
  app.addHook('onClose', async () => client.close());
  // Leave every body on the socket: the handler pipes it to the zone app as it arrives.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  const platformOrigin = originOf(app.ctx.config.publicUrl);

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const { authorization, cookie } = req.headers;
    if (signsInByCookie(authorization, cookie)) {
      const refusal = crossOriginRefusal(req.method, req.headers, platformOrigin);
      if (refusal) throw new ApiError('forbidden', refusal);
    }
    // Only a page of the platform origin could register one (an opaque-origin zone page cannot); never a zone app's script.
    if (req.headers['service-worker'] !== undefined) throw new ApiError('forbidden', 'a zone app cannot provide a service worker');
    const rawUrl = req.raw.url ?? '';
    const match = PREFIX.exec(rawUrl);
    const pass = await passZoneProxy(app.ctx, parseId(match?.[1]), userCredential(authorization, cookie));
    const target = upstreamUrl(pass.zoneAppUrl, rawUrl.slice(match![0].length));
    if (!target) throw new ApiError('invalid_body', 'path must stay under the zone app: no . or .. segments, however encoded');
    return forward(client, req, reply, target, forwardedRequestHeaders(req, pass.zoneToken, `/zones/${pass.agentId}/app`));
  };
  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  const proxied = {
    operationId: 'zoneAppProxy',
    summary: 'The agent’s zone app, for a signed-in member',
    description: 'Forwards the request to `{zone_app_url}/{*}` with a fresh zone JWT in X-Zone-Token, never the user’s own credential or cookies. Writes signed in by the session cookie must come from the platform’s origin (CSRF).',
    params: Type.Object({ agentId: Type.String(), '*': Type.String({ description: 'The path under the zone app, forwarded as sent.' }) }),
    response: {
      default: rawAnswer('The zone app’s own answer, streamed; its cookies and origin-wide headers are dropped and a sandbox Content-Security-Policy added.', '*/*', {}),
    },
  };
  // The wildcard route documents the app's root too (`{*}` empty).
  app.route({ method: methods, url: '/', schema: { hide: true }, handler });
  app.route({ method: methods, url: '/*', schema: proxied, handler });
}
