// Issue 39 item 4 "Data lifecycle, opt-in" (decisions.md "Data lifecycle"): the three settings are unset by default
// (spec 2.2: runs and their snapshots are retained indefinitely), take whole days, and are refused, naming the
// variable, below a day or below the Idempotency-Key lifetime a deleted or scrubbed run would cut short.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('config: data lifecycle', () => {
  it('defaults: nothing about runs or the audit log is ever deleted or scrubbed', () => {
    expect(loadConfig({}).lifecycle).toEqual({ runRetentionDays: null, runScrubDays: null, auditRetentionDays: null });
    expect(loadConfig({ ARS_RUN_RETENTION_DAYS: '', ARS_RUN_SCRUB_DAYS: '', ARS_AUDIT_RETENTION_DAYS: '' }).lifecycle.runRetentionDays).toBeNull();
  });

  it('takes whole days, each on its own', () => {
    expect(loadConfig({ ARS_RUN_RETENTION_DAYS: '400', ARS_RUN_SCRUB_DAYS: '30', ARS_AUDIT_RETENTION_DAYS: '1' }).lifecycle).toEqual({
      runRetentionDays: 400,
      runScrubDays: 30,
      auditRetentionDays: 1,
    });
    expect(loadConfig({ ARS_RUN_SCRUB_DAYS: '1' }).lifecycle).toEqual({ runRetentionDays: null, runScrubDays: 1, auditRetentionDays: null });
  });

  it('refuses, naming the variable: zero, a fraction, a word', () => {
    for (const name of ['ARS_RUN_RETENTION_DAYS', 'ARS_RUN_SCRUB_DAYS', 'ARS_AUDIT_RETENTION_DAYS']) {
      for (const days of ['0', '1.5', 'forever', '-3']) expect(problems({ [name]: days }), `${name}=${days}`).toEqual([expect.stringContaining(name)]);
    }
  });

  it('refuses deleting or scrubbing runs sooner than their Idempotency-Keys expire; the audit setting is not bound by them', () => {
    expect(problems({ ARS_IDEMPOTENCY_TTL_HOURS: '72', ARS_RUN_RETENTION_DAYS: '2', ARS_RUN_SCRUB_DAYS: '2' })).toEqual([
      expect.stringMatching(/^ARS_RUN_RETENTION_DAYS must be at least ARS_IDEMPOTENCY_TTL_HOURS/),
      expect.stringMatching(/^ARS_RUN_SCRUB_DAYS must be at least ARS_IDEMPOTENCY_TTL_HOURS/),
    ]);
    expect(problems({ ARS_IDEMPOTENCY_TTL_HOURS: '72', ARS_RUN_RETENTION_DAYS: '3', ARS_AUDIT_RETENTION_DAYS: '1' })).toEqual([]);
  });
});
