// Rules applied to the whole generated document, once, where a route schema cannot say them:
// - a route answering several methods (webhooks: POST, PUT, PATCH; the zone proxy) becomes one operation per method,
//   each with its own operationId (the method appended), as OpenAPI requires them unique;
// - the headers every answer shares are components, referenced where the service sends them: x-request-id on
//   every answer, Retry-After on every 429 and 503, RateLimit-* on every answer of a limited operation (sent on
//   whatever answers a request once it has been counted: a 2xx, a 429, or a failure of the run it started);
// - a JSON body none of whose fields is required may be left out (those routes take a missing body as `{}`);
// - path ids typed, the wildcard named, and the headers handlers set themselves (openapi-exact.ts).
import { addHandlerHeaders, exactHeaderComponents, exactPaths } from './openapi-exact.ts';

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];

const integerHeader = (description: string, required = false) => ({ description, required, schema: { type: 'integer', minimum: 0 } });

const HEADERS: Json = {
  RequestId: {
    description: 'Names this answer in the service’s logs; error bodies repeat it as `requestId`.',
    required: true,
    schema: { type: 'string' },
  },
  RetryAfter: integerHeader('Seconds to wait before retrying: to the next minute boundary (429), or for the database (503).', true),
  RateLimitLimit: integerHeader('Requests allowed per one-minute bucket for this endpoint and caller.'),
  RateLimitRemaining: integerHeader('Requests left in the current bucket.'),
  RateLimitReset: integerHeader('Seconds until the bucket resets (the next minute boundary).'),
};

const headerRef = (name: string) => ({ $ref: `#/components/headers/${name}` });

export function finishDocument(doc: Json): Json {
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  for (const item of Object.values(paths)) {
    splitSharedOperations(item);
    for (const method of METHODS) {
      const op = item[method] as Json | undefined;
      if (!op) continue;
      addSharedHeaders(op);
      addHandlerHeaders(op);
      markOptionalBody(op);
    }
  }
  exactPaths(doc);
  const components = (doc.components ?? {}) as Json;
  doc.components = { ...components, headers: { ...HEADERS, ...exactHeaderComponents() } };
  return doc;
}

function splitSharedOperations(item: Json): void {
  const methodsOf = new Map<unknown, string[]>();
  for (const method of METHODS) {
    if (item[method]) methodsOf.set(item[method], [...(methodsOf.get(item[method]) ?? []), method]);
  }
  for (const [op, methods] of methodsOf) {
    if (methods.length < 2) continue;
    for (const method of methods) {
      const copy = structuredClone(op) as Json;
      copy.operationId = `${String(copy.operationId)}${method[0]!.toUpperCase()}${method.slice(1)}`;
      item[method] = copy;
    }
  }
}

function addSharedHeaders(op: Json): void {
  const responses = (op.responses ?? {}) as Record<string, Json>;
  const limited = '429' in responses;
  for (const [status, response] of Object.entries(responses)) {
    const headers: Json = { 'x-request-id': headerRef('RequestId') };
    if (status === '429' || status === '503') headers['retry-after'] = headerRef('RetryAfter');
    if (limited && status !== 'default') {
      headers['ratelimit-limit'] = headerRef('RateLimitLimit');
      headers['ratelimit-remaining'] = headerRef('RateLimitRemaining');
      headers['ratelimit-reset'] = headerRef('RateLimitReset');
    }
    response.headers = { ...headers, ...((response.headers as Json | undefined) ?? {}) };
  }
}

function markOptionalBody(op: Json): void {
  const body = op.requestBody as { required?: boolean; content?: Record<string, { schema?: Json }> } | undefined;
  const schema = body?.content?.['application/json']?.schema;
  if (!body || !schema || '$ref' in schema) return;
  const required = schema.required as unknown[] | undefined;
  if (!required || required.length === 0) body.required = false;
}
