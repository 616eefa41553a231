// House style 7: configuration is parsed once and fails fast naming every bad variable. Here: the variables of
// issue 11 item 5 "Operations" (ARS_METRICS_TOKEN, ARS_RETENTION_DAYS; README "Configuration").
import { readFileSync } from 'node:fs';
import path from 'node:path';
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

describe('config: Idempotency-Key lifetime (issue 13 item 4, decisions.md "Idempotency keys")', () => {
  it('keeps answers 24 hours by default; 1 to 720 hours may be set; anything else is refused, naming the variable', () => {
    expect(loadConfig({}).idempotencyTtlHours).toBe(24);
    expect(loadConfig({ ARS_IDEMPOTENCY_TTL_HOURS: '720' }).idempotencyTtlHours).toBe(720);
    for (const hours of ['0', '1.5', 'day', '721']) {
      expect(problems({ ARS_IDEMPOTENCY_TTL_HOURS: hours }), hours).toEqual([expect.stringContaining('ARS_IDEMPOTENCY_TTL_HOURS')]);
    }
  });
});

describe('config: master keys (decisions.md "Storage and secrets")', () => {
  const k1 = Buffer.alloc(32, 1).toString('base64');
  const k2 = Buffer.alloc(32, 2).toString('base64url');

  it('ARS_MASTER_KEY is one key under the id "default"; nothing configured leaves the embedded default to generate one', () => {
    expect(loadConfig({ ARS_MASTER_KEY: k1 }).masterKeys).toEqual({ current: 'default', keys: [{ id: 'default', key: Buffer.alloc(32, 1) }] });
    expect(loadConfig({}).masterKeys).toBeNull();
  });

  it('ARS_MASTER_KEYS: id:key pairs (base64 or base64url), the first seals unless ARS_MASTER_KEY_ID names another', () => {
    const keys = [
      { id: 'k2026', key: Buffer.alloc(32, 2) },
      { id: 'default', key: Buffer.alloc(32, 1) },
    ];
    expect(loadConfig({ ARS_MASTER_KEYS: `k2026:${k2}, default:${k1}` }).masterKeys).toEqual({ current: 'k2026', keys });
    expect(loadConfig({ ARS_MASTER_KEYS: `k2026:${k2},default:${k1}`, ARS_MASTER_KEY_ID: 'default' }).masterKeys).toEqual({ current: 'default', keys });
  });

  it('refuses, naming the variable and never echoing a key: bad or repeated entries, an unknown sealing id, both forms, none with DATABASE_URL', () => {
    const cases: Array<[Record<string, string>, RegExp]> = [
      [{ ARS_MASTER_KEY: 'c2hvcnQ=' }, /ARS_MASTER_KEY must be 32 bytes/],
      [{ ARS_MASTER_KEYS: k1 }, /ARS_MASTER_KEYS entry 1 must be <key id>:<base64 key>/],
      [{ ARS_MASTER_KEYS: `a:${k1},a:${k2}` }, /names key "a" twice/],
      [{ ARS_MASTER_KEYS: `a:${k1},b:${k1.slice(0, 20)}` }, /ARS_MASTER_KEYS key "b" must be 32 bytes/],
      [{ ARS_MASTER_KEYS: `a:${k1}`, ARS_MASTER_KEY_ID: 'b' }, /ARS_MASTER_KEY_ID must name one of the keys/],
      [{ ARS_MASTER_KEY_ID: 'a' }, /ARS_MASTER_KEY_ID names one of ARS_MASTER_KEYS, which is not set/],
      [{ ARS_MASTER_KEY: k1, ARS_MASTER_KEYS: `a:${k2}` }, /not both/],
      [{ DATABASE_URL: 'postgres://db/ars' }, /ARS_MASTER_KEY or ARS_MASTER_KEYS is required with DATABASE_URL/],
    ];
    for (const [env, expected] of cases) {
      const found = problems(env);
      expect(found.join('\n'), JSON.stringify(Object.keys(env))).toMatch(expected);
      for (const p of found) for (const key of [k1, k2, k1.slice(0, 20)]) expect(p).not.toContain(key);
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
    // Issue 39 item 1: the request log setting is one of three words; issue 38 item 3: the live stream caps.
    expect(problems({ ARS_REQUEST_LOG: 'verbose' })).toEqual(['ARS_REQUEST_LOG must be one of all, errors, server_errors (got "verbose")']);
    expect(loadConfig({ ARS_REQUEST_LOG: 'errors' }).requestLog).toBe('errors');
    expect(problems({ ARS_LIVE_STREAMS_PER_USER: '0' })).toEqual([expect.stringContaining('ARS_LIVE_STREAMS_PER_USER')]);
  });
});

describe('config: the README table (issue 13: every variable, its default and when it is required)', () => {
  const ROOT = path.resolve(import.meta.dirname, '..');

  /** What src/config.ts reads: `env.NAME` and `int('NAME', …)` in its source, and every name a load with nothing set asks for. */
  function variablesRead(): Set<string> {
    const source = readFileSync(path.join(ROOT, 'src/config.ts'), 'utf8');
    const names = new Set([...source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)|\bint\('([A-Z][A-Z0-9_]*)'/g)].map((m) => m[1] ?? m[2]!));
    const asked = new Proxy({} as Record<string, string | undefined>, {
      get: (_target, key) => void (typeof key === 'string' && names.add(key)),
    });
    loadConfig(asked);
    return names;
  }

  /** The table rows of the README's "Configuration" section, as their cells. */
  function tableRows(): string[][] {
    const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
    const start = readme.indexOf('\n## Configuration');
    const section = readme.slice(start, readme.indexOf('\n## ', start + 1));
    return section.split('\n').filter((l) => l.startsWith('| `')).map((l) => l.split('|').slice(1, -1).map((c) => c.trim()));
  }

  it('lists every variable src/config.ts reads, and none it does not', () => {
    const read = variablesRead();
    const listed = new Set(tableRows().flatMap((cells) => [...cells[0]!.matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1]!)));
    expect(read.size).toBeGreaterThan(20); // the scan did find the reads
    expect([...read].filter((name) => !listed.has(name)).sort()).toEqual([]);
    expect([...listed].filter((name) => !read.has(name)).sort()).toEqual([]);
  });

  it('gives every variable a meaning, a default and when it is required', () => {
    const rows = tableRows();
    expect(rows.length).toBeGreaterThan(20);
    for (const cells of rows) expect(cells.map((c) => c !== ''), cells[0]).toEqual([true, true, true, true]);
  });
});

// Issue 39 item 4 "Data lifecycle, opt-in" (decisions.md "Data lifecycle"): the three settings are unset by default
// (spec 2.2: runs and their snapshots are retained indefinitely), take whole days, and are refused, naming the
// variable, below a day or below the Idempotency-Key lifetime a deleted or scrubbed run would cut short.
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
