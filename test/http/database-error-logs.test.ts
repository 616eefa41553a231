// decisions.md "Errors and logs" (issue 12, finding 8): a database error is logged with its code, constraint,
// table, column, routine and message, never with the row it was about (PostgreSQL's "Failing row contains (…)",
// "Key (…)=(…)"), the statement's parameters (PGlite attaches them) or a value quoted in a data-exception message.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { redactDatabaseMessage, serializeError } from '../../src/http/log-redaction.ts';

let t: TestApp;
let a: SeededAgent;
const secret = () => `sk_live_FORCED_${randomBytes(12).toString('hex')}`;

beforeAll(async () => {
  t = await createTestApp();
  a = await seedAgent(t);
  // A check constraint every run carrying a forced marker in its input violates: the insert fails in the database.
  await t.db.query("ALTER TABLE runs ADD CONSTRAINT forced_failure CHECK (input::text NOT LIKE '%FORCED%')");
  await t.db.query("CREATE TABLE hygiene_unique (v text UNIQUE, w text NOT NULL DEFAULT '')");
});
afterAll(() => t?.close());

/** The database error `sql` raises, logged through the service's own logger as a background job would. */
async function logged(sql: string, params: unknown[]): Promise<{ err: Record<string, unknown>; line: string }> {
  const before = t.logs.length;
  const err = await t.db.query(sql, params).then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).not.toBeNull();
  t.ctx.log.error({ err }, 'forced database error');
  const line = t.logs.slice(before).find((l) => l.includes('forced database error'))!;
  return { err: (JSON.parse(line) as { err: Record<string, unknown> }).err, line };
}

describe('database errors in the logs', () => {
  it('a check-constraint violation through an endpoint answers 500 and logs code, constraint and table, not the row', async () => {
    const value = secret();
    const before = t.logs.length;
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/agents/${a.agent.id}/runs/register`,
      headers: a.ingestAuth,
      payload: { externalRunId: `ext-${value}`, input: { apiKey: value, note: 'FORCED' } },
    });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain(value);
    const lines = t.logs.slice(before).join('\n');
    const unhandled = lines.split('\n').find((l) => l.includes('"code":"internal"'))!; // the request's one line
    expect(JSON.parse(unhandled).err).toMatchObject({ code: '23514', constraint: 'forced_failure', table: 'runs', routine: expect.any(String) });
    expect(JSON.parse(unhandled).err.message).toBe('new row for relation "runs" violates check constraint "forced_failure"');
    expect(lines).not.toContain(value);
    expect(lines).not.toContain('Failing row');
    expect(lines).not.toMatch(/"(detail|where|query|params|internalQuery)"/);
  });

  it('a unique violation keeps its message and drops "Key (v)=(…) already exists"', async () => {
    const value = secret();
    await t.db.query('INSERT INTO hygiene_unique (v) VALUES ($1)', [value]);
    const { err, line } = await logged('INSERT INTO hygiene_unique (v) VALUES ($1)', [value]);
    expect(err).toMatchObject({ code: '23505', constraint: 'hygiene_unique_v_key', message: 'duplicate key value violates unique constraint "hygiene_unique_v_key"' });
    expect(line).not.toContain(value);
  });

  it('a not-null violation names the column; a data exception masks the value its message quotes', async () => {
    const value = secret();
    const nulled = await logged('INSERT INTO hygiene_unique (v, w) VALUES ($1, NULL)', [value]);
    expect(nulled.err).toMatchObject({ code: '23502', column: 'w', table: 'hygiene_unique' });
    expect(nulled.line).not.toContain(value);
    const cast = await logged('SELECT $1::uuid', [value]);
    expect(cast.err).toMatchObject({ code: '22P02', message: 'invalid input syntax for type uuid: "[REDACTED]"' });
    expect(cast.line).not.toContain(value);
    expect(redactDatabaseMessage('22003', `value "${value}" is out of range for type integer`)).toBe('value "[REDACTED]" is out of range for type integer');
  });

  it('a database error carried as the cause of another error is cleaned the same way', async () => {
    const value = secret();
    const dbError = await t.db.query('SELECT $1::uuid', [value]).then(() => null, (e: unknown) => e);
    const wrapped = serializeError(new Error('could not record the workflow answer', { cause: dbError })) as { cause: Record<string, unknown> };
    expect(wrapped.cause).toMatchObject({ code: '22P02' });
    expect(JSON.stringify(wrapped)).not.toContain(value);
  });

  it('other errors keep their own fields, minus the ones that carry statements or rows', () => {
    const err = Object.assign(new Error('blocked'), { kind: 'ARS_OUTBOUND_BLOCKED', query: 'SELECT 1', params: ['x'] });
    expect(serializeError(err)).toMatchObject({ type: 'Error', message: 'blocked', kind: 'ARS_OUTBOUND_BLOCKED' });
    expect(serializeError(err)).not.toHaveProperty('params');
    expect(serializeError('not an error')).toBe('not an error');
  });
});
