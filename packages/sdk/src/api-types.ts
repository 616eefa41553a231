// Request and response shapes, taken from the generated OpenAPI types (src/generated/openapi.ts, `npm run
// sdk:types`) so they follow the service's document instead of a hand-kept copy.
import type { components, operations } from './generated/openapi.ts';

type Schemas = components['schemas'];

/** The JSON body an operation takes. */
export type RequestBody<Op extends keyof operations> = operations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;

/** The JSON body an operation answers with `status`. */
export type ResponseBody<Op extends keyof operations, Status extends number> = operations[Op]['responses'] extends {
  [S in Status]: { content: { 'application/json': infer B } };
}
  ? B
  : never;

export type TriggerAccepted = Schemas['TriggerAccepted'];
export type SyncCompleted = Schemas['SyncCompleted'];
export type SyncTimedOut = Schemas['SyncTimedOut'];
export type RegisterAccepted = Schemas['RegisterAccepted'];
export type IngestResult = Schemas['IngestResult'];
export type ResolvedCredential = Schemas['ResolvedCredential'];
export type AdminRun = Schemas['AdminRun'];
export type ErrorBody = Schemas['Error'];
/** What the service sends the runtime when it starts a run (spec 2.3, plus deploymentId, serviceUrl, callbackUrl). */
export type TaskPayload = Schemas['TaskPayload'];
/** A webhook action's body (spec part 6); `run` is the admin run view without `source`. */
export type WebhookEvent = Schemas['WebhookEvent'];
export type EventRun = WebhookEvent['run'];

export type TriggerBody = RequestBody<'triggerRun'>;
export type TriggerAndWaitBody = RequestBody<'triggerAndWait'>;
export type TriggerAndDownloadBody = RequestBody<'triggerAndDownload'>;
export type RegisterBody = RequestBody<'registerRun'>;
export type IngestBody = RequestBody<'ingestRun'>;
export type CallbackBody = RequestBody<'postCallback'>;

/** The service's closed list of error codes, plus `unexpected_response` for an answer that is not one of its errors. */
export type ErrorCode = ErrorBody['code'] | 'unexpected_response';
