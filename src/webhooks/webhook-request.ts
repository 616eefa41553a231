// Shapes an inbound webhook into the task input `{ webhook }` (spec 4.6) and its stored, redacted snapshot.
// Caller-controlled names (query keys, header names, JSON keys) are only ever written into null-prototype
// objects or with defineProperty, so "__proto__" and "constructor" stay ordinary keys and still serialize.
import type { IncomingHttpHeaders } from 'node:http';
import { nestsTooDeep, stripNul } from '../lib/storable-json.ts';
import { SESSION_COOKIE } from '../orgs/user-auth.ts';

export type WebhookHeaders = Record<string, string | string[]>;

export interface WebhookObject {
  method: string;
  query: Record<string, string>;
  /** Node's `req.headers` shape: lowercased names, repeats joined; only `set-cookie` is an array. */
  headers: WebhookHeaders;
  body: unknown;
  rawBody: string;
  rawBodyEncoding: 'utf8' | 'base64';
  receivedAt: string;
}

/** The stored input snapshot: no `rawBody`, secrets masked, NUL made visible. */
export type StoredWebhook = Omit<WebhookObject, 'rawBody'>;

export interface BuildWebhookInput {
  method: string;
  /** Path and query exactly as received (`req.url`). */
  rawUrl: string;
  /** `req.headers`, or `req.rawHeaders` (flat name/value list) / name-value pairs to keep every repeat. */
  headers: IncomingHttpHeaders | readonly string[] | ReadonlyArray<readonly [string, string]>;
  rawBody: Buffer;
  receivedAt: Date;
}

export const REDACTED = '[REDACTED]';

export function buildWebhookObject(input: BuildWebhookInput): WebhookObject {
  const text = decodeUtf8(input.rawBody);
  return {
    method: input.method,
    query: parseQuery(input.rawUrl),
    headers: withoutPlatformCookies(normalizeHeaders(input.headers)),
    body: text === null ? null : parseBody(text),
    rawBody: text ?? input.rawBody.toString('base64'),
    rawBodyEncoding: text === null ? 'base64' : 'utf8',
    receivedAt: input.receivedAt.toISOString(),
  };
}

/**
 * spec 4.6 redaction. `rawBodyEncoding` is kept: without the bytes it is harmless, and it explains a null
 * `body` (the payload was binary). NUL characters are replaced for jsonb (stripNul).
 */
export function redactForStorage(webhook: WebhookObject): StoredWebhook {
  const headers: WebhookHeaders = Object.create(null);
  for (const [name, value] of Object.entries(webhook.headers)) {
    headers[name] = isSecretHeader(name) ? REDACTED : value;
  }
  const { rawBody: _rawBody, ...rest } = webhook;
  return stripNul({ ...rest, headers });
}

const SECRET_HEADERS = new Set(['authorization', 'proxy-authorization', 'cookie', 'set-cookie', 'x-api-key']);

export function isSecretHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return SECRET_HEADERS.has(lower) || /-(signature|secret|token)$/.test(lower);
}

function parseQuery(rawUrl: string): Record<string, string> {
  const start = rawUrl.indexOf('?');
  if (start === -1) return Object.create(null);
  const hash = rawUrl.indexOf('#', start);
  const params = new URLSearchParams(rawUrl.slice(start + 1, hash === -1 ? undefined : hash));
  // A Map first: repeated keys collect in arrival order and are joined once (spec 4.6: comma-joined).
  const grouped = new Map<string, string[]>();
  for (const [key, value] of params) {
    const values = grouped.get(key);
    if (values) values.push(value);
    else grouped.set(key, [value]);
  }
  const query: Record<string, string> = Object.create(null);
  for (const [key, values] of grouped) query[key] = values.join(',');
  return query;
}

/**
 * Cookies the service itself sets on its origin. A browser attaches them to any same-origin POST to a webhook URL
 * (the platform's own /docs page is one), so they are taken out of the task's copy (issue 35): a runtime must never
 * hold a user's session. Every other cookie passes verbatim (spec 4.6); the stored copy masks the whole header.
 */
const PLATFORM_COOKIES = new Set([SESSION_COOKIE]);

function withoutPlatformCookies(headers: WebhookHeaders): WebhookHeaders {
  const cookie = headers.cookie;
  if (typeof cookie !== 'string') return headers;
  const pairs = cookie.split(';');
  const kept = pairs.filter((pair) => !PLATFORM_COOKIES.has(pair.split('=', 1)[0]!.trim()));
  if (kept.length === pairs.length) return headers;
  const rest = kept.join(';').trim();
  if (rest === '') delete headers.cookie;
  else headers.cookie = rest;
  return headers;
}

// Node discards repeats of these rather than joining them (http.IncomingMessage.headers).
const SINGLE_VALUE_HEADERS = new Set([
  'age', 'authorization', 'content-length', 'content-type', 'etag', 'expires', 'from', 'host',
  'if-modified-since', 'if-unmodified-since', 'last-modified', 'location', 'max-forwards',
  'proxy-authorization', 'referer', 'retry-after', 'server', 'user-agent',
]);

function normalizeHeaders(source: BuildWebhookInput['headers']): WebhookHeaders {
  const headers: WebhookHeaders = Object.create(null);
  if (!Array.isArray(source)) {
    for (const [name, value] of Object.entries(source as IncomingHttpHeaders)) {
      if (value === undefined) continue;
      const key = name.toLowerCase();
      headers[key] = Array.isArray(value) ? (key === 'set-cookie' ? [...value] : value.join(', ')) : value;
    }
    return headers;
  }
  for (const [name, value] of toPairs(source)) addHeader(headers, name.toLowerCase(), value);
  return headers;
}

function toPairs(source: readonly string[] | ReadonlyArray<readonly [string, string]>): Array<readonly [string, string]> {
  if (source.length === 0 || Array.isArray(source[0])) return source as Array<readonly [string, string]>;
  const flat = source as readonly string[];
  const pairs: Array<readonly [string, string]> = [];
  for (let i = 0; i + 1 < flat.length; i += 2) pairs.push([flat[i] as string, flat[i + 1] as string]);
  return pairs;
}

// Same joining rules as Node builds req.headers from req.rawHeaders, so both inputs give the same object.
function addHeader(headers: WebhookHeaders, name: string, value: string): void {
  const existing = headers[name];
  if (name === 'set-cookie') {
    headers[name] = Array.isArray(existing) ? [...existing, value] : [value];
  } else if (existing === undefined) {
    headers[name] = value;
  } else if (!SINGLE_VALUE_HEADERS.has(name)) {
    headers[name] = `${existing as string}${name === 'cookie' ? '; ' : ', '}${value}`;
  }
}

// ignoreBOM keeps a leading BOM in the string: rawBody must be the exact bytes for signature checks.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Buffer): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Native JSON.parse defines every key (including "__proto__") as an own data property and never touches
 * Object.prototype, so it cannot pollute; unlike secure-json-parse's remove/error modes it also keeps the
 * caller's document intact, which is what the task is promised (spec 4.6 "Parsed JSON").
 */
function parseBody(text: string): unknown {
  const json = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (json.trim() === '') return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  // Deeper JSON cannot be serialized back (JSON.stringify overflows), so it is not carried as `body`.
  return nestsTooDeep(value) ? null : value;
}
