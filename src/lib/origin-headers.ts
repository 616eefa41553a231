// Answer headers the service never passes on from a third party it serves on its own origin — a zone app through
// the zone proxy, an agent's `webhookResponse` on webhook-and-wait (issue 35: one list for both). Both are tenant
// content on the origin that holds the session cookie, so neither may send a header that acts for the whole origin
// rather than for the one answer.

/** RFC 9110 §7.6.1 connection-specific headers, plus the non-standard ones proxies also drop. */
export const HOP_BY_HOP: ReadonlySet<string> = new Set([
  'connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'trailers',
  'transfer-encoding', 'upgrade',
]);

/**
 * Cookies of the platform origin (any, not only the session's: a cookie set here is sent to every zone and to the
 * platform), origin-wide state and policies (site data, transport security, alternative services, network error
 * reporting), a wider service-worker scope, and a browser login prompt on the platform's name.
 */
const ORIGIN_WIDE: ReadonlySet<string> = new Set([
  'set-cookie', 'set-cookie2', 'clear-site-data', 'service-worker-allowed', 'strict-transport-security', 'alt-svc',
  'nel', 'report-to', 'reporting-endpoints', 'www-authenticate',
]);

/** `access-control-*` is refused as a prefix: tenant content must not open the platform origin to other origins' reads. */
export function isOriginWideHeader(name: string): boolean {
  return ORIGIN_WIDE.has(name) || name.startsWith('access-control-');
}
