// spec 4.7: turns a finished run's agent output into the webhook-and-wait 200 response. The agent (and, through
// it, whoever called the webhook) controls this response, so everything reaching the wire is filtered here.
import { HOP_BY_HOP, isOriginWideHeader } from '../lib/origin-headers.ts';

export interface ShapedWebhookResponse {
  status: number;
  /** Lowercased names; never contains content-type (see `contentType`), content-length or hop-by-hop headers. */
  headers: Record<string, string>;
  body: string;
  contentType: string;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';

// RFC 9110 5.6.2 token, and a field value as Node will accept it (no CR, LF, NUL or other controls but tab).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const FIELD_VALUE = /^[\t\x20-\x7e\x80-\xff]*$/;

// spec 4.7 names content-length, set-cookie and hop-by-hop headers (RFC 9110 7.6.1). content-encoding is also
// dropped: the body we send is never encoded, so passing it on would make clients fail to decode the body. And
// the answer is served on the platform's origin, so whatever a zone app may not send is dropped too (issue 35:
// lib/origin-headers.ts, the zone proxy's list).
const FRAMING = new Set(['content-length', 'content-encoding']);

function isDropped(name: string): boolean {
  return FRAMING.has(name) || HOP_BY_HOP.has(name) || isOriginWideHeader(name);
}

// The response is served from the service's own origin, where the zone apps and the session cookie live: an agent
// echoing caller input as HTML must not be able to run script there. nosniff always wins, and the sandbox CSP is
// always sent; an agent's own policy is added to it, never instead of it (a browser enforces every policy of a
// comma-separated list, so an added one can only narrow ours: "sandbox allow-same-origin" lifts nothing).
const SAFETY_HEADERS: Record<string, string> = { 'x-content-type-options': 'nosniff' };
const SAFETY_NAMES = new Set(Object.keys(SAFETY_HEADERS));
const SANDBOX_CSP = 'sandbox';
const CSP = 'content-security-policy';

function withSandbox(headers: Record<string, string>): Record<string, string> {
  const own = headers[CSP];
  return { ...headers, [CSP]: own === undefined ? SANDBOX_CSP : `${SANDBOX_CSP}, ${own}`, ...SAFETY_HEADERS };
}

export function shapeWebhookResponse(agentOutput: unknown): ShapedWebhookResponse {
  const control = isPlainObject(agentOutput) ? agentOutput.webhookResponse : undefined;
  if (!isPlainObject(control)) {
    // No (usable) webhookResponse: the agent output itself, not wrapped in a run envelope.
    return { status: 200, headers: withSandbox({}), body: toJson(agentOutput), contentType: JSON_TYPE };
  }

  const status = clampStatus(control.status);
  const { headers, contentType: suppliedType } = filterHeaders(control.headers);
  const { body, contentType } = shapeBody(control.body, suppliedType);
  // No body may accompany these statuses (RFC 9110 15.3.5, 15.3.6); the agent's body is dropped.
  const bodiless = status === 204 || status === 205;
  return {
    status,
    headers: withSandbox(headers),
    body: bodiless ? '' : body,
    contentType,
  };
}

/** spec 4.7: 200–499. Below 200 and 3xx become 200 (the run succeeded; a redirect is never emitted); 5xx → 499. */
function clampStatus(value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value)) return 200;
  if (value < 200 || (value >= 300 && value < 400)) return 200;
  return Math.min(value, 499);
}

function filterHeaders(value: unknown): { headers: Record<string, string>; contentType: string | undefined } {
  const headers: Record<string, string> = {};
  let contentType: string | undefined;
  if (!isPlainObject(value)) return { headers, contentType };

  const valid: Array<[string, string]> = [];
  for (const [name, headerValue] of Object.entries(value)) {
    // spec 4.7: string values only; anything that could split or smuggle a header line is dropped, never repaired.
    if (typeof headerValue !== 'string' || !TOKEN.test(name) || !FIELD_VALUE.test(headerValue)) continue;
    valid.push([name.toLowerCase(), headerValue]);
  }
  const connection = valid.find(([name]) => name === 'connection')?.[1] ?? '';
  const listed = new Set(connection.split(',').map((token) => token.trim().toLowerCase()));

  for (const [name, headerValue] of valid) {
    if (isDropped(name) || listed.has(name) || SAFETY_NAMES.has(name)) continue;
    if (name === 'content-type') contentType = headerValue;
    // defineProperty keeps a "__proto__" header an ordinary entry rather than a prototype change.
    else Object.defineProperty(headers, name, { value: headerValue, enumerable: true, writable: true, configurable: true });
  }
  return { headers, contentType };
}

/**
 * spec 4.7: a string is text/plain, anything else JSON; an absent body is an empty one. A content-type the
 * agent supplies wins for string bodies, and for other bodies only when it names a JSON media type (the bytes
 * are JSON, so the label must stay JSON).
 */
function shapeBody(value: unknown, suppliedType: string | undefined): { body: string; contentType: string } {
  if (value === undefined) return { body: '', contentType: suppliedType ?? TEXT_TYPE };
  if (typeof value === 'string') return { body: value, contentType: suppliedType ?? TEXT_TYPE };
  const isJsonType = suppliedType !== undefined && /^application\/([\w.+-]+\+)?json\s*(;|$)/i.test(suppliedType);
  return { body: toJson(value), contentType: isJsonType ? (suppliedType as string) : JSON_TYPE };
}

function toJson(value: unknown): string {
  return JSON.stringify(value) ?? 'null';
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}
