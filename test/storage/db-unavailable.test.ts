// issue 11 item 4: which failures answer 503 (the database is unreachable or did not answer in time).
import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from '../../src/storage/db-unavailable.ts';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', withCode('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432')],
    ['connection reset', withCode('ECONNRESET', 'read ECONNRESET')],
    ['connect timed out (socket)', withCode('ETIMEDOUT')],
    ['host not found', withCode('ENOTFOUND', 'getaddrinfo ENOTFOUND db')],
    ["the pool's connection timeout", new Error('timeout exceeded when trying to connect')],
    ['a connection cut mid-query', new Error('Connection terminated unexpectedly')],
    ["the client's connect timeout", new Error('Connection terminated due to connection timeout')],
    ['a client that already lost its connection', new Error('Client has encountered a connection error and is not queryable')],
    ['SQLSTATE 08006 connection failure', withCode('08006')],
    ['SQLSTATE 08P01 protocol violation (class 08)', withCode('08P01')],
    ['57P01 admin shutdown', withCode('57P01', 'terminating connection due to administrator command')],
    ['57P02 crash shutdown', withCode('57P02')],
    ['57P03 cannot connect now (starting up)', withCode('57P03', 'the database system is starting up')],
    ['57014 statement timeout', withCode('57014', 'canceling statement due to statement timeout')],
    ['53300 too many connections', withCode('53300')],
    ['25P03 idle-in-transaction timeout', withCode('25P03')],
    ['an AggregateError of both localhost addresses', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')], 'x')],
    ['a wrapped cause', new Error('query failed', { cause: withCode('ECONNRESET') })],
  ])('%s is unavailability', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(true);
  });

  it.each([
    ['a unique violation', withCode('23505', 'duplicate key value violates unique constraint')],
    ['a syntax error', withCode('42601')],
    ['a lock not available (NOWAIT)', withCode('55P03')],
    ['a wrong password', withCode('28P01', 'password authentication failed for user "ars"')],
    ['a plain error', new Error('connection refused, said a test')],
    ['a string', 'ECONNREFUSED'],
    ['null', null],
    ['undefined', undefined],
  ])('%s is not', (_name, err) => {
    expect(isDatabaseUnavailable(err)).toBe(false);
  });

  it('does not follow a cause chain for ever', () => {
    const a: Error & { cause?: unknown } = new Error('a');
    a.cause = a;
    expect(isDatabaseUnavailable(a)).toBe(false);
  });
});
