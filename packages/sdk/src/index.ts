// `@agent-run-service/sdk`: the callers' and the tasks' clients and the API's types. No Node built-in is reachable
// from here (test/sdk/root-entry.test.ts), so a browser or edge bundle can take it; the webhook verifier, which
// needs node:crypto, is `@agent-run-service/sdk/webhooks` (webhooks.ts).
export { AgentRunClient, filenameOf } from './agent-run-client.ts';
export type { AgentRunClientOptions, Download, StartOptions, Triggered, WaitOptions, WaitResult } from './agent-run-client.ts';
export { TaskClient } from './task-client.ts';
export type { TaskClientOptions, TaskError, WaitingReport } from './task-client.ts';
export { AgentRunError } from './errors.ts';
export type { FetchLike, RetryOptions } from './http.ts';
export type * from './api-types.ts';
export type { components, operations, paths } from './generated/openapi.ts';
