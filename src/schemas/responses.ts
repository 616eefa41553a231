// The answer bodies several routes share, each a named component of the OpenAPI document (house style 4 and 16:
// one schema source gives the serializer, the handler's types and the document). Routes point at them with
// `ref(X)`; buildApp registers them once (app.addSchema), so the serializer and the document resolve the same one.
//
// fast-json-stringify drops what a response schema does not declare and coerces what it declares, so: free-form
// values (output_data, input, metadata, extras) are `{}` or open objects and pass through untouched; what may be
// null is declared nullable the OpenAPI 3.1 way (`type: [X, 'null']`), never coerced to "" or 0.
import { Type, type Static, type TSchema } from 'typebox';
import { ERROR_CODES } from '../errors.ts';
import { ACTIVE_STATUSES, RUN_STATUSES, TERMINAL_STATUSES } from './run-status.ts';

/** A schema that may also be null, as OpenAPI 3.1 (JSON Schema 2020-12) says it: `type: [X, 'null']`. */
export function nullable<T extends TSchema & { type: string }>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: [schema.type, 'null'] });
}

type HeaderDocs = Record<string, { description: string; type: string }>;
/** Secrets and files: never kept by a cache on the way. */
export const NO_STORE: Readonly<HeaderDocs> = { 'cache-control': { description: 'Always `no-store`.', type: 'string' } };

/** A free-form JSON object (input, metadata, extras): every key passes through. */
export const JsonObject = Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true });
const RunId = Type.Integer({ minimum: 1, description: 'Platform run id.' });
const Timestamp = Type.String({ format: 'date-time' });

export const ErrorBody = Type.Object(
  {
    error: Type.String({ description: 'What went wrong, for a person.' }),
    code: Type.Enum([...ERROR_CODES], { description: 'Stable machine code; the status follows from it (docs/api.md).' }),
    requestId: Type.String({ description: 'The x-request-id of this answer; quote it when reporting a problem.' }),
    runId: Type.Optional(RunId),
  },
  { $id: 'Error', additionalProperties: false, description: 'Every error answer: `{error, code, requestId}`, plus `runId` wherever a run exists.' },
);

export const TriggerAccepted = Type.Object(
  { runId: RunId, status: Type.Literal('queued') },
  { $id: 'TriggerAccepted', additionalProperties: false, description: 'The run was created and its runtime invoked; follow it by its runId.' },
);

/** The run fields every run view shows (spec 4.2's 200 body); `status` is narrowed per view. */
const runFields = {
  runId: RunId,
  agentId: Type.Integer({ minimum: 1 }),
  output_data: Type.Unknown({ description: 'The agent output (any JSON, usually an object), or null. For a download, the file metadata (spec 2.2).' }),
  outputs: Type.Integer({ minimum: 0, description: 'Output units counted for billing and metrics.' }),
  error: nullable(Type.String({ description: 'Short failure reason.' })),
  duration_ms: nullable(Type.Number({ minimum: 0 })),
  started_at: nullable(Timestamp),
  completed_at: nullable(Timestamp),
  created_at: Timestamp,
};

export const SyncCompleted = Type.Object(
  { ...runFields, status: Type.Enum([...TERMINAL_STATUSES]) },
  { $id: 'SyncCompleted', additionalProperties: false, description: 'The run reached a terminal state within the wait window (spec 4.2).' },
);

export const SyncTimedOut = Type.Object(
  { runId: RunId, agentId: Type.Integer({ minimum: 1 }), status: Type.Enum([...ACTIVE_STATUSES]), timedOut: Type.Literal(true) },
  { $id: 'SyncTimedOut', additionalProperties: false, description: 'The wait window ended first; the run goes on (spec 4.2, 8.3). Not an error.' },
);

export const WebhookTimedOut = Type.Object(
  { runId: RunId, status: Type.Literal('running'), timedOut: Type.Literal(true) },
  { $id: 'WebhookTimedOut', additionalProperties: false, description: 'The wait window ended first; the run goes on. 2xx on purpose: a retrying sender must not start a second run (spec 4.7).' },
);

export const ZoneRun = Type.Object(
  {
    ...runFields,
    status: Type.Enum([...RUN_STATUSES]),
    waiting: Type.Optional(
      Type.Object(
        { description: Type.String(), url: nullable(Type.String()), output: Type.Unknown() },
        { additionalProperties: false, description: 'Only while the run is waiting: what the reviewer is shown.' },
      ),
    ),
  },
  { $id: 'ZoneRun', additionalProperties: false, description: "The run, as spec 4.2's 200 body, plus `waiting` while it waits." },
);

export const AdminRun = Type.Object(
  {
    ...runFields,
    status: Type.Enum([...RUN_STATUSES]),
    error: Type.Unsafe<unknown>({ type: ['string', 'object', 'null'], additionalProperties: true, description: 'As stored: a string (ingest), an object {name?, message?, stack?} (callback), or null.' }),
    created_by: nullable(Type.String({ format: 'uuid' })),
    source: Type.String({
      description: 'How the run started: trigger, trigger_and_wait, download, webhook, webhook_and_wait, register, ingest, zone, zone_wait, zone_download, replay or console.',
    }),
    external_run_id: nullable(Type.String()),
    metadata: JsonObject,
    input: JsonObject,
    runtime_note: nullable(Type.String({ description: 'What the service could not do at the runtime, in a sentence.' })),
  },
  { $id: 'AdminRun', additionalProperties: false, description: 'A run with its attribution and snapshots (input as stored: header values masked).' },
);

/** The admin run detail (issue 14): the run, what it waits for, its timeline and its replay links. */
export const AdminRunDetail = Type.Object(
  {
    ...AdminRun.properties,
    wait: Type.Unsafe<{ description: string; url: string | null; output: unknown } | null>({
      type: ['object', 'null'],
      properties: { description: { type: 'string' }, url: { type: ['string', 'null'] }, output: {} },
      required: ['description', 'url', 'output'],
      additionalProperties: false,
      description: 'While waiting: what the task said it waits for (never its token).',
    }),
    timeline: Type.Array(
      Type.Object(
        { status: Type.Enum([...RUN_STATUSES]), via: Type.String({ description: 'The path that wrote it: the run\'s source for its first status, then callback, poll, alert, sync, start, timeout, admin, ingest, waitpoint or recovery.' }), at: Timestamp },
        { additionalProperties: false },
      ),
      { description: 'Every status the run entered, oldest first.' },
    ),
    replay_of: nullable(Type.Integer({ minimum: 1, description: 'The run this one replays.' })),
    replays: Type.Array(Type.Integer({ minimum: 1 }), { description: 'The runs that replay this one.' }),
  },
  { $id: 'AdminRunDetail', additionalProperties: false, description: 'A run with its wait state, timeline and replay links (issue 14).' },
);

const ConnectionRef = Type.Object({ integrationId: Type.String(), connectionId: Type.String() }, { additionalProperties: false });

export const RegisterAccepted = Type.Object(
  {
    runId: RunId,
    credentialsToken: Type.Optional(Type.String({ description: 'HS256 JWT for credential resolution (with the agent key).' })),
    expiresInSeconds: Type.Optional(Type.Integer({ minimum: 0, description: 'What is left of the token’s 60 minutes.' })),
    connectionIds: Type.Optional(Type.Record(Type.String(), ConnectionRef, { description: 'By integration id: the agent’s active connections.' })),
  },
  { $id: 'RegisterAccepted', additionalProperties: false, description: 'The run (the same one on a repeat); token and connectionIds come together or not at all (spec 4.4).' },
);

export const IngestResult = Type.Object(
  { runId: RunId, status: Type.Enum(['created', 'updated']) },
  { $id: 'IngestResult', additionalProperties: false, description: '`updated` when the call changed an existing run (spec 4.5).' },
);

export const WaitpointCompleted = Type.Object(
  { ok: Type.Literal(true) },
  { $id: 'WaitpointCompleted', additionalProperties: false, description: 'The runtime accepted the completion; the run is running again (spec 4.9).' },
);

const extras = JsonObject;
export const ApiKeyCredential = Type.Object(
  { type: Type.Literal('api_key'), value: Type.String(), extras },
  { $id: 'ApiKeyCredential', additionalProperties: false },
);
export const BasicAuthCredential = Type.Object(
  { type: Type.Literal('basic_auth'), username: Type.String(), password: Type.String(), extras },
  { $id: 'BasicAuthCredential', additionalProperties: false },
);
export const OAuthCredential = Type.Object(
  { type: Type.Literal('oauth'), access_token: Type.String(), extras },
  { $id: 'OAuthCredential', additionalProperties: false, description: '`extras` may hold token_type, expires_at and scope from the provider; admin metadata wins on a collision.' },
);
export const ResolvedCredential = Type.Unsafe<Static<typeof ApiKeyCredential> | Static<typeof BasicAuthCredential> | Static<typeof OAuthCredential>>({
  $id: 'ResolvedCredential',
  oneOf: [ref(ApiKeyCredential), ref(BasicAuthCredential), ref(OAuthCredential)],
  description: 'The secret of one connection, by its `type` (spec 4.10). Never cache it: answers carry Cache-Control: no-store.',
});

export const Health = Type.Object({ ok: Type.Literal(true) }, { $id: 'Health', additionalProperties: false, description: 'The check passed.' });

export const AlertReceipt = Type.Object(
  {
    received: Type.Literal(true),
    outcome: Type.Enum(['applied', 'already_terminal', 'duplicate', 'unknown_run', 'ignored']),
    runId: nullable(RunId),
  },
  { $id: 'AlertReceipt', additionalProperties: false, description: 'Accepted (so the sender stops retrying); `outcome` says what it changed.' },
);

/**
 * What the service sends, not what it answers (the document's `webhooks`): the task payload a runtime gets (spec 2.3
 * plus our deploymentId, serviceUrl and callbackUrl: decisions.md "Task payload") and a webhook action's body
 * (spec part 6). Components all the same, so the SDK takes its types from here (issue 38 item 5).
 */
export const TaskPayload = Type.Object(
  {
    runId: RunId,
    input: Type.Unsafe<Record<string, unknown>>({ type: 'object', additionalProperties: true, description: 'The run input; a webhook run\'s is `{webhook: …}` (spec 4.6).' }),
    deploymentId: Type.String({ description: 'Names this deployment: with runId it names the run exactly at a runtime several deployments share.' }),
    serviceUrl: Type.String({ format: 'uri', description: 'ARS_PUBLIC_URL: the base of the callback, waitpoint and credential endpoints.' }),
    callbackUrl: Type.String({ format: 'uri', description: '`{serviceUrl}/api/runs/{runId}/callback` (spec 4.8).' }),
    connectionIds: Type.Optional(Type.Record(Type.String(), ConnectionRef, { description: 'By integration id: the agent’s active connections.' })),
    credentialsToken: Type.Optional(Type.String({ description: 'The run’s credentials JWT (60 minutes); comes with connectionIds or not at all.' })),
  },
  { $id: 'TaskPayload', additionalProperties: false, description: 'Sent to the runtime when a run starts (spec 2.3). Never holds the agent key: that comes from the runtime’s environment.' },
);

const { source: _source, ...eventRunFields } = AdminRun.properties;
export const WebhookEvent = Type.Object(
  {
    run: Type.Object(eventRunFields, { additionalProperties: false, description: 'The run as it was when the event happened: the admin view without `source`.' }),
    output: Type.Unknown({ description: 'The run’s output_data.' }),
    run_url: Type.Optional(Type.String({ description: '`waiting` events only: the task’s review page, or the run’s page in the console (spec part 6).' })),
    waiting: Type.Optional(
      Type.Object(
        { description: nullable(Type.String()), url: nullable(Type.String()), output: Type.Unknown() },
        { additionalProperties: false, description: '`waiting` events only: what the reviewer is asked.' },
      ),
    ),
  },
  { $id: 'WebhookEvent', additionalProperties: false, description: 'The body of a webhook action’s delivery, signed per Standard Webhooks (spec part 6).' },
);

/**
 * An answer that is not Fastify's JSON (a file, text, an agent's or a zone app's own answer): documented by its
 * media type, never serialized (the handlers send strings and streams, which Fastify passes through as they are).
 */
export function rawAnswer(description: string, mediaType: string, schema: object, headers?: HeaderDocs) {
  return Type.Unsafe<unknown>({ description, content: { [mediaType]: { schema } }, ...(headers && { headers }) });
}

/** Spec 4.3's 200: the runtime's file, streamed, with its headers passed through. */
export const DOWNLOAD = rawAnswer('The file, streamed as the runtime sends it, in the runtime’s Content-Type (spec 4.3).', '*/*', { type: 'string', format: 'binary' }, {
  'content-disposition': { description: 'Passed through; when the runtime sent none, `attachment; filename="run-<id>.<ext>"`.', type: 'string' },
  'content-length': { description: 'Passed through when the runtime sent one; absent on chunked transfer.', type: 'integer' },
  'x-run-id': { description: 'The platform run id.', type: 'integer' },
  'x-content-type-options': { description: 'Always `nosniff`: the file is never sniffed into another type.', type: 'string' },
  'content-security-policy': { description: 'Always `sandbox`: served from the service’s origin, the file can run no script there.', type: 'string' },
  ...NO_STORE,
});

/** An answer with no body: `type: 'null'` gives the document no content; the handler sends nothing (`undefined`). */
export function noBody(description: string) {
  return Type.Unsafe<undefined>({ type: 'null', description });
}

/** A synchronous caller that hung up before its answer: 204 is written to nobody (the run goes on, or a download fails). */
export const CALLER_GONE = noBody('The caller left before the answer; nothing reaches anyone.');

/** The components of this module, registered once by buildApp. */
export const RUN_COMPONENTS: readonly TSchema[] = [
  ErrorBody, TriggerAccepted, SyncCompleted, SyncTimedOut, WebhookTimedOut, ZoneRun, AdminRun, AdminRunDetail, RegisterAccepted, IngestResult,
  WaitpointCompleted, ApiKeyCredential, BasicAuthCredential, OAuthCredential, ResolvedCredential, Health, AlertReceipt,
  TaskPayload, WebhookEvent,
];

/** A reference to a registered component, typed as the component (so the handler's answer is checked). */
export function ref<T extends TSchema>(schema: T) {
  const id = (schema as { $id?: unknown }).$id;
  if (typeof id !== 'string') throw new Error('ref() needs a schema with an $id');
  return Type.Unsafe<Static<T>>({ $ref: `${id}#` });
}

/** A component as one status's answer, with that answer's own description (and headers worth knowing). */
export function answer<T extends TSchema>(schema: T, description: string, headers?: HeaderDocs) {
  return Type.Unsafe<Static<T>>({ ...ref(schema), description, ...(headers && { headers }) });
}

