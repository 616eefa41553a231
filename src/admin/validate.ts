// Checks the admin schemas cannot express, and the small helpers the admin services share.
import { errors } from '../errors.ts';
import type { OutboundClient } from '../lib/safe-http.ts';

/**
 * admin-api.md: base_url, zone_app_url, token_url and webhook action urls are absolute http(s) URLs. Credentials
 * inside a URL are refused: they would travel into logs and the UI, and each of these has a proper secret field.
 */
export function checkHttpUrl(field: string, value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw errors.invalid(`body.${field}`, 'must be an absolute http(s) URL');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || /\s/.test(value)) {
    throw errors.invalid(`body.${field}`, 'must be an absolute http(s) URL');
  }
  if (url.username !== '' || url.password !== '') throw errors.invalid(`body.${field}`, 'must not contain credentials');
  return value;
}

/**
 * A URL a tenant stores and the service fetches (zone_app_url, webhook action url, OAuth token_url; issue 35): its
 * shape, then the SSRF guard's write-time check (a clear 400). The guard checks again at every fetch (DNS rebinding).
 * Call it before a transaction opens: it may wait for DNS.
 */
export async function checkFetchableUrl(outbound: Pick<OutboundClient, 'refusalOf'>, field: string, value: string): Promise<string> {
  checkHttpUrl(field, value);
  const refusal = await outbound.refusalOf(value);
  if (refusal !== null) throw errors.invalid(`body.${field}`, refusal);
  return value;
}

/** A PostgreSQL unique violation, optionally of one named constraint or index (both drivers set code/constraint). */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  if (typeof err !== 'object' || err === null) return false;
  const e = err as { code?: unknown; constraint?: unknown };
  return e.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/** Names of the fields a body actually set, for audit details (never their values). */
export function fieldsSet(body: object): string[] {
  return Object.entries(body)
    .filter(([, v]) => v !== undefined)
    .map(([k]) => k)
    .sort();
}
