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

describe('config: slow clients (issue 12, decisions.md "Slow clients")', () => {
  it('defaults: request 30 s, headers 10 s, keep-alive 72 s, connection idle 330 s, download stall 60 s', () => {
    expect(loadConfig({})).toMatchObject({
      requestTimeoutMs: 30_000, headersTimeoutMs: 10_000, keepAliveTimeoutMs: 72_000, connectionIdleTimeoutMs: 330_000, downloadStallMs: 60_000,
    });
  });

  it('takes each of them, and 0 for no connection idle timeout', () => {
    expect(loadConfig({
      ARS_REQUEST_TIMEOUT_MS: '60000', ARS_HEADERS_TIMEOUT_MS: '60000', ARS_KEEP_ALIVE_TIMEOUT_MS: '5000', ARS_CONNECTION_IDLE_TIMEOUT_MS: '0', ARS_DOWNLOAD_STALL_MS: '1000',
    })).toMatchObject({ requestTimeoutMs: 60_000, headersTimeoutMs: 60_000, keepAliveTimeoutMs: 5_000, connectionIdleTimeoutMs: 0, downloadStallMs: 1_000 });
  });

  it('refuses, naming the variable: headers longer than the request, a connection idle timeout a held answer outlasts', () => {
    expect(problems({ ARS_REQUEST_TIMEOUT_MS: '5000', ARS_HEADERS_TIMEOUT_MS: '6000' })).toEqual([expect.stringContaining('ARS_HEADERS_TIMEOUT_MS')]);
    for (const ms of ['300000', '60000']) {
      expect(problems({ ARS_CONNECTION_IDLE_TIMEOUT_MS: ms }), ms).toEqual([expect.stringContaining('ARS_CONNECTION_IDLE_TIMEOUT_MS')]);
    }
    expect(problems({ ARS_DOWNLOAD_STALL_MS: '10' })).toEqual([expect.stringContaining('ARS_DOWNLOAD_STALL_MS')]);
    expect(problems({ ARS_REQUEST_TIMEOUT_MS: 'soon' })).toEqual([expect.stringContaining('ARS_REQUEST_TIMEOUT_MS')]);
  });
});
