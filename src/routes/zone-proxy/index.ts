// ANY /zones/{agentId}/app/* → {zone_app_url}/* (zones.md "The proxy mints the zone JWT"). A signed-in user
// (personal token as bearer, or the ars_session cookie) who is a member of the agent's organization passes; every
// request carries a zone JWT minted for it alone. Bodies are streamed: this context parses nothing.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { userCredential } from '../../orgs/user-auth.ts';
import { passZoneProxy } from '../../zones/zone-proxy-access.ts';
import { createZoneProxyClient, upstreamUrl } from '../../zones/zone-proxy-client.ts';
import { forward, forwardedRequestHeaders } from './forward.ts';

const PREFIX = /^\/zones\/([^/?#]+)\/app/;

export default async function zoneProxyRoutes(app: FastifyInstance): Promise<void> {
  const client = createZoneProxyClient(); // one per instance, for its keep-alive pool
  app.addHook('onClose', async () => client.close());
  // Leave every body on the socket: the handler pipes it to the zone app as it arrives.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  const handler = async (req: FastifyRequest, reply: FastifyReply) => {
    const rawUrl = req.raw.url ?? '';
    const match = PREFIX.exec(rawUrl);
    const pass = await passZoneProxy(app.ctx, parseId(match?.[1]), userCredential(req.headers.authorization, req.headers.cookie));
    const target = upstreamUrl(pass.zoneAppUrl, rawUrl.slice(match![0].length));
    if (!target) throw new ApiError('invalid_body', 'path must not contain . or .. segments');
    return forward(client, req, reply, target, forwardedRequestHeaders(req, pass.zoneToken, `/zones/${pass.agentId}/app`));
  };
  const methods = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];
  app.route({ method: methods, url: '/', handler });
  app.route({ method: methods, url: '/*', handler });
}
