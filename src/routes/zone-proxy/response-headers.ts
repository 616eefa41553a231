// What a zone app's answer may carry on the platform origin (decisions.md "Zone apps on the platform origin").
// Every zone app is served from the platform's one origin, where the session cookie lives. So every answer gets
// a sandbox the app cannot lift: our Content-Security-Policy header is sent beside the app's own (a browser
// enforces every policy it gets, so another one can only narrow it), and it has no allow-same-origin, so the
// app's page runs in an opaque origin: it can neither read the platform's cookie or storage nor make the
// browser send the cookie on its requests (nor register a service worker). Headers that would act for the whole
// origin rather than for this one answer are dropped.
import { isOriginWideHeader } from '../../lib/origin-headers.ts';

/**
 * Scripts, forms, popups, dialogs and downloads work, in an opaque origin. No allow-same-origin, no top
 * navigation. `frame-ancestors 'self'`: only the platform's own pages may frame a zone app (no clickjacking).
 */
export const ZONE_SANDBOX_CSP =
  "sandbox allow-scripts allow-forms allow-popups allow-popups-to-escape-sandbox allow-modals allow-downloads; frame-ancestors 'self'";

/** Ours, whatever the app says (an app-sent header of the same name is dropped; the CSP is added to, not replaced). */
const PLATFORM_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  // A zone page opened from the platform's pages gets no handle on them (window.opener), and the other way round.
  'cross-origin-opener-policy': 'same-origin',
  // Other sites cannot embed a zone's answers (script, image) with the visitor's cookie.
  'cross-origin-resource-policy': 'same-origin',
  // A console frame's address carries its pass (zones/zone-frame-pass.ts): links and fetches never send it on.
  'referrer-policy': 'no-referrer',
};

const OURS: ReadonlySet<string> = new Set(Object.keys(PLATFORM_HEADERS));

/** Never passed on from a zone app: what acts for the whole origin (lib/origin-headers.ts), and our own headers above. */
export function isDroppedZoneHeader(name: string): boolean {
  return OURS.has(name) || isOriginWideHeader(name);
}

/**
 * The headers every zone answer ends with; the app's own CSP (if any) follows ours. `framed`: an answer at a console
 * frame's address (zones/zone-frame-pass.ts), asked for by the app's own opaque-origin page, which
 * `cross-origin-resource-policy: same-origin` would refuse; such an address needs the pass in its path, not a
 * cookie, so another site still cannot embed it as the visitor.
 */
export function platformZoneHeaders(appCsp: string | string[] | undefined, framed = false): Record<string, string | string[]> {
  const app = appCsp === undefined ? [] : Array.isArray(appCsp) ? appCsp : [appCsp];
  return {
    ...PLATFORM_HEADERS,
    ...(framed && { 'cross-origin-resource-policy': 'cross-origin' }),
    'content-security-policy': [ZONE_SANDBOX_CSP, ...app],
  };
}
