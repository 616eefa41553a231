// House style 7: configuration is parsed once and fails fast naming every bad variable. Here: the variables of
// issue 11 item 5 "Operations" (ARS_METRICS_TOKEN, ARS_RETENTION_DAYS; README "Configuration").
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

describe('config: metrics and retention', () => {
  it('defaults: /metrics open, rows kept 7 days', () => {
    expect(loadConfig({})).toMatchObject({ metricsToken: null, retentionDays: 7 });
  });

  it('takes a metrics token of 32+ characters and a retention of 1 to 3650 days', () => {
    const token = 'm'.repeat(32);
    expect(loadConfig({ ARS_METRICS_TOKEN: token, ARS_RETENTION_DAYS: '1' })).toMatchObject({ metricsToken: token, retentionDays: 1 });
    expect(loadConfig({ ARS_RETENTION_DAYS: '3650' }).retentionDays).toBe(3650);
  });

  it('refuses, naming the variable: a short or spaced token, a retention under one day, a fraction or a word', () => {
    expect(problems({ ARS_METRICS_TOKEN: 'short' })).toEqual([expect.stringContaining('ARS_METRICS_TOKEN')]);
    expect(problems({ ARS_METRICS_TOKEN: `${'m'.repeat(32)} x` })).toEqual([expect.stringContaining('ARS_METRICS_TOKEN')]);
    for (const days of ['0', '1.5', 'week', '3651']) {
      expect(problems({ ARS_RETENTION_DAYS: days }), days).toEqual([expect.stringContaining('ARS_RETENTION_DAYS')]);
    }
  });
});
