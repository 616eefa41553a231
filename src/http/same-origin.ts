// CSRF defence for requests a browser signs in by itself: the session cookie (decisions.md "Cookies, CSRF and
// zone tokens"). A browser attaches the cookie to requests other sites make it send, so an unsafe request that
// the cookie authenticates must prove it comes from the platform's own pages: its Origin is the platform's
// origin (config ARS_PUBLIC_URL), or, with no Origin, Sec-Fetch-Site says same-origin (or none: the user's own
// action). A request with neither header is refused: every browser sends one of them on an unsafe request, and
// a client that is not a browser signs in with the bearer token instead. `Origin: null` (a sandboxed page, a
// zone app's own page included, a cross-origin redirect, a privacy-stripped origin) is foreign.

/** RFC 9110 9.2.1: the methods defined as safe; everything else may change something. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** Why this cookie-authenticated request must be refused (403), or null when it may go on. */
export function crossOriginRefusal(
  method: string,
  headers: { origin?: string | string[]; 'sec-fetch-site'?: string | string[] },
  platformOrigin: string,
): string | null {
  if (SAFE_METHODS.has(method.toUpperCase())) return null;
  const origin = headers.origin;
  if (origin !== undefined) {
    return origin === platformOrigin ? null : 'a request signed in by the session cookie must come from the platform\'s own pages (Origin)';
  }
  const site = headers['sec-fetch-site'];
  if (site === 'same-origin' || site === 'none') return null;
  return site === undefined
    ? 'a request signed in by the session cookie must carry Origin or Sec-Fetch-Site; other clients use a bearer token'
    : 'a request signed in by the session cookie must come from the platform\'s own pages (Sec-Fetch-Site)';
}

/** The origin browsers send for the platform's own pages: scheme, host and port of ARS_PUBLIC_URL. */
export function originOf(publicUrl: string): string {
  return new URL(publicUrl).origin;
}
