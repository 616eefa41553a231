// Spec part 3: the exact reasons written by the timeout paths (tests and dashboards match these strings).
export const QUEUED_TIMEOUT_REASON = 'Run never started (queued timeout exceeded)';
export const RUNNING_TIMEOUT_REASON = 'Run exceeded running timeout';
