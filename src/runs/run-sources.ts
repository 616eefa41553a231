// Where a run came from (runs.source): the endpoint that started it here, or the agent's own report (`register`,
// `ingest`). Only the first kind has a runtime call this service made, an input it can start again, and a first
// status it knows without storing it (run-timeline.ts).

/** The sources of the runs this service starts at a runtime (start-run.ts prepareRun): each is inserted `queued`. */
export const STARTED_SOURCES = [
  'trigger', 'trigger_and_wait', 'download', 'webhook', 'webhook_and_wait', 'zone', 'zone_wait', 'zone_download', 'console', 'replay',
] as const;

export type StartedSource = (typeof STARTED_SOURCES)[number];

const STARTED: ReadonlySet<string> = new Set(STARTED_SOURCES);

export function isStartedSource(source: string): source is StartedSource {
  return STARTED.has(source);
}
