// The document says exactly what goes over the wire (issue 38 item 6), where the route schemas cannot:
// - path ids: the routes take every path segment as a string (a malformed id is a 404, not a 400), but an agent,
//   run, runtime or delivery id is an integer and an organization, user, token, connection or webhook action id a
//   UUID; a client generated from the document must be able to pass the ids the service answers with as they are;
// - the zone proxy's wildcard (Fastify's `*`) is named `{path}`, a name a template parameter may have;
// - headers set by a handler or an edge hook and so invisible to the route schema: Idempotent-Replayed on the
//   answers a replay can give, Set-Cookie on sign-out, Location on the zone proxy's 303.
type Json = Record<string, unknown>;

const INTEGER_ID = { type: 'integer', minimum: 1 };
const UUID = { type: 'string', format: 'uuid' };

/** A path parameter's type by its name; `id` by the collection before it. */
const ID_BY_NAME: Record<string, object> = {
  agentId: INTEGER_ID, runId: INTEGER_ID, runtimeId: INTEGER_ID, deliveryId: INTEGER_ID,
  orgId: UUID, userId: UUID, tokenId: UUID, connectionId: UUID,
};
const ID_BY_COLLECTION: Record<string, object> = {
  agents: INTEGER_ID, runtimes: INTEGER_ID,
  orgs: UUID, users: UUID, connections: UUID, 'webhook-actions': UUID,
};

const WILDCARD = '{*}';
const WILDCARD_NAME = 'path';

/** The header components this module's headers refer to, for the document's `components.headers`. */
export function exactHeaderComponents(): Record<string, Json> {
  return {
    IdempotentReplayed: {
      description: 'Present, `true`, when this answer is the replay of an earlier request with the same Idempotency-Key: this request started nothing.',
      schema: { type: 'string', enum: ['true'] },
    },
  };
}

/** Headers a handler sets that its schema does not declare, by operationId (after the per-method split) and status. */
const HANDLER_HEADERS: Record<string, Record<string, Json>> = {
  deleteSession: { 204: { 'set-cookie': { description: 'Clears the session cookie: an empty `ars_session` that expires at once.', schema: { type: 'string' } } } },
  // The proxy sends a page navigation signed in by the cookie on to its framed address (one operation per method).
  ...Object.fromEntries(['Get', 'Head', 'Post', 'Put', 'Patch', 'Delete', 'Options'].map((m) => [`zoneAppProxy${m}`, {
    303: {
      location: { description: 'The framed address (`/zones/{agentId}/framed/{pass}/{path}`) to go on to.', required: true, schema: { type: 'string' } },
      'cache-control': { description: 'Always `no-store`.', schema: { type: 'string' } },
    },
  }])),
};

/** Renames the wildcard and types the ids of every path; `paths` is replaced in place, keeping its order. */
export function exactPaths(doc: Json): void {
  const paths = (doc.paths ?? {}) as Record<string, Json>;
  const renamed: Record<string, Json> = {};
  for (const [template, item] of Object.entries(paths)) {
    const name = template.replaceAll(WILDCARD, `{${WILDCARD_NAME}}`);
    for (const op of operations(item)) {
      if (name !== template) renameWildcard(op);
      for (const param of (op.parameters ?? []) as Json[]) {
        if (param.in === 'path') typePathId(name, param);
      }
    }
    renamed[name] = item;
  }
  doc.paths = renamed;
}

/** The headers no route schema says: Idempotent-Replayed where a key is taken, and the handlers' own. */
export function addHandlerHeaders(op: Json): void {
  const responses = (op.responses ?? {}) as Record<string, Json>;
  const takesKey = ((op.parameters ?? []) as Json[]).some((p) => p.in === 'header' && p.name === 'idempotency-key');
  for (const [status, response] of Object.entries(responses)) {
    const headers = { ...((response.headers as Json | undefined) ?? {}) };
    // A replay repeats the first answer, whatever its status: any documented answer may carry the header.
    if (takesKey && status !== 'default') headers['idempotent-replayed'] = { $ref: '#/components/headers/IdempotentReplayed' };
    Object.assign(headers, HANDLER_HEADERS[String(op.operationId)]?.[status] ?? {});
    if (Object.keys(headers).length > 0) response.headers = headers;
  }
}

function typePathId(template: string, param: Json): void {
  const name = String(param.name);
  const byName = ID_BY_NAME[name];
  if (byName) param.schema = { ...byName };
  if (name !== 'id') return;
  const segments = template.split('/');
  const collection = segments[segments.indexOf('{id}') - 1] ?? '';
  const byCollection = ID_BY_COLLECTION[collection];
  // A new `{id}` route must say which kind of id it takes: the document is not guessed.
  if (!byCollection) throw new Error(`openapi: no id type for ${template}; add its collection to ID_BY_COLLECTION`);
  param.schema = { ...byCollection };
}

function renameWildcard(op: Json): void {
  for (const param of (op.parameters ?? []) as Json[]) {
    if (param.in === 'path' && param.name === '*') param.name = WILDCARD_NAME;
  }
  for (const key of ['summary', 'description']) {
    if (typeof op[key] === 'string') op[key] = op[key].replaceAll(WILDCARD, `{${WILDCARD_NAME}}`);
  }
}

function operations(item: Json): Json[] {
  return Object.values(item).filter((v): v is Json => typeof v === 'object' && v !== null && 'responses' in v);
}
