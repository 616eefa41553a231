// The database with a span per statement (issue 39 item 2), used only while spans are recorded (context.ts): the
// statement's text — parameterised, so no value of a row — and its operation, as OpenTelemetry's database
// conventions name them. A transaction is a span whose statements are its children.
import { SpanKind, SpanStatusCode, context, trace, type Attributes } from '@opentelemetry/api';
import { tracer } from '../tracing/spans.ts';
import type { Db, Queryable, QueryResult, Tx } from './db.ts';

const DB_SYSTEM = 'postgresql';
/** Long generated statements are cut: the span is for finding a statement, not for storing it. */
const MAX_TEXT = 2_000;

export function tracedDb(db: Db): Db {
  return {
    driver: db.driver,
    query: (sql, params) => traced(sql, () => db.query(sql, params)),
    transaction: (fn) => inTransactionSpan(() => db.transaction((tx) => fn(tracedTx(tx)))),
    exec: (sql) => traced(sql, () => db.exec(sql)),
    maintain: (sql) => traced(sql, () => db.maintain(sql)),
    listen: (channel, onMessage, onResubscribed) => db.listen(channel, onMessage, onResubscribed),
    ...(db.poolStats ? { poolStats: () => db.poolStats!() } : {}),
    close: () => db.close(),
  };
}

function tracedTx(tx: Tx): Tx {
  const q: Queryable = { query: (sql, params) => traced(sql, () => tx.query(sql, params)) };
  return { ...q, exec: (sql) => traced(sql, () => tx.exec(sql)) } as Tx;
}

function traced<T>(sql: string, run: () => Promise<T>): Promise<T>;
function traced<R>(sql: string, run: () => Promise<QueryResult<R>>): Promise<QueryResult<R>> {
  const operation = /^\s*(\w+)/.exec(sql)?.[1]?.toUpperCase() ?? 'SQL';
  const attributes: Attributes = { 'db.system.name': DB_SYSTEM, 'db.operation.name': operation, 'db.query.text': sql.length > MAX_TEXT ? `${sql.slice(0, MAX_TEXT)}…` : sql };
  const span = tracer.startSpan(operation, { kind: SpanKind.CLIENT, attributes });
  return run().then(
    (result) => {
      span.end();
      return result;
    },
    (err: unknown) => {
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string') span.setAttribute('db.response.status_code', code);
      // The SQLSTATE, not the message: PostgreSQL's messages may quote a row's values (see http/log-redaction.ts).
      span.setStatus({ code: SpanStatusCode.ERROR, message: typeof code === 'string' ? `SQLSTATE ${code}` : 'failed' });
      span.end();
      throw err;
    },
  );
}

async function inTransactionSpan<T>(fn: () => Promise<T>): Promise<T> {
  const span = tracer.startSpan('transaction', { kind: SpanKind.INTERNAL, attributes: { 'db.system.name': DB_SYSTEM } });
  try {
    return await context.with(trace.setSpan(context.active(), span), fn);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    throw err;
  } finally {
    span.end();
  }
}
