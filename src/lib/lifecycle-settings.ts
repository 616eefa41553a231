// The data-lifecycle settings (issue 39 item 4; decisions.md "Data lifecycle"), parsed by loadConfig (config.ts)
// with the rest of the configuration; a module of their own to keep config.ts within the size of a module.

export interface LifecycleSettings {
  /** Terminal runs are deleted, with what names them, this many days after they finished. */
  runRetentionDays: number | null;
  /** Terminal runs lose their input, output and error this many days after their last change. */
  runScrubDays: number | null;
  /** Audit entries are deleted this many days after they were written. */
  auditRetentionDays: number | null;
}

/** loadConfig's whole-number parser: the value, or `fallback` with a problem recorded. */
type IntSetting = (name: string, fallback: number, min: number, max: number) => number;

/**
 * Unset: kept indefinitely, as the contract says (spec 2.2). A run deleted or scrubbed while an Idempotency-Key still
 * replays its first answer would cut that promise short (or replay the data the scrub removed): refused.
 */
export function lifecycleOf(env: Record<string, string | undefined>, int: IntSetting, idempotencyTtlHours: number, problems: string[]): LifecycleSettings {
  const days = (name: string, outlastsKeys: boolean): number | null => {
    if (env[name] === undefined || env[name] === '') return null;
    const n = int(name, 0, 1, 36_500);
    if (outlastsKeys && n > 0 && n * 24 < idempotencyTtlHours) problems.push(`${name} must be at least ARS_IDEMPOTENCY_TTL_HOURS (${idempotencyTtlHours} h) in days`);
    return n > 0 ? n : null;
  };
  return {
    runRetentionDays: days('ARS_RUN_RETENTION_DAYS', true),
    runScrubDays: days('ARS_RUN_SCRUB_DAYS', true),
    auditRetentionDays: days('ARS_AUDIT_RETENTION_DAYS', false),
  };
}
