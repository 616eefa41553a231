import pg from 'pg';
import { INT8_OID, parseInt8, type Db, type Queryable, type QueryResult, type Tx } from './db.ts';

const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function wrap(q: pg.Pool | pg.PoolClient, statements: NamedStatements): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const values = params as unknown[] | undefined;
      const name = values?.length ? statements.nameFor(sql) : null;
      let res: pg.QueryResult;
      try {
        res = name ? await runNamed(q, name, sql, values!) : await q.query(sql, values);
      } catch (err) {
        // A migration by another instance changed a table under a prepared `RETURNING *`: PostgreSQL refuses that
        // statement on this connection from now on. It gets a new name; this call runs unprepared.
        if (!name || !isStalePlan(err)) throw err;
        statements.retire(sql);
        res = await q.query(sql, values);
      }
      return { rows: res.rows as R[], rowCount: res.rowCount ?? res.rows.length };
    },
  };
}

/**
 * A named statement, handed to pg as a Query built from its text. Given a config object (`{ name, text, values }`),
 * pg copies it through Object.getOwnPropertyDescriptors on every call, about 3 µs against 0.2 µs from a text (the
 * largest single item of pg's share in the /trigger profile, issue 15); the name is what a config would set. A
 * Query passed with a callback is how pg-pool releases its connection after it, on a pool and a pinned client alike.
 * A failure gets a stack that leads back to the caller rather than to the socket, as pg gives the statements it
 * promises itself.
 */
function runNamed(q: pg.Pool | pg.PoolClient, name: string, sql: string, values: unknown[]): Promise<pg.QueryResult> {
  const query = new pg.Query(sql, values);
  (query as { name?: string }).name = name;
  return new Promise<pg.QueryResult>((resolve, reject) =>
    (q.query as unknown as SubmitWithCallback).call(q, query, (err, res) => (err ? reject(err) : resolve(res))),
  ).catch((err: unknown) => {
    if (err instanceof Error) Error.captureStackTrace(err);
    throw err;
  });
}

/** pg's `query(submittable, callback)`, which its types do not declare. */
type SubmitWithCallback = (query: pg.Query, cb: (err: Error | undefined, res: pg.QueryResult) => void) => void;

/**
 * Statements run with parameters more than a couple of times become named prepared statements: PostgreSQL then
 * parses and plans each once per connection instead of on every call (on the hot writes that is most of the
 * database's CPU per request; bench). The text decides the name, so a name always means one text. Bounded:
 * beyond MAX_NAMED distinct texts the rest run unprepared. (PgBouncer in transaction mode needs
 * max_prepared_statements, 1.21 or later.)
 */
class NamedStatements {
  static readonly MAX_NAMED = 300;
  static readonly PREPARE_AFTER = 2; // one-off texts (admin filters) stay unprepared
  readonly #seen = new Map<string, { uses: number; name: string | null }>();
  #named = 0;
  #generation = 0;

  nameFor(sql: string): string | null {
    let entry = this.#seen.get(sql);
    if (!entry) {
      if (this.#seen.size >= 10 * NamedStatements.MAX_NAMED) return null;
      this.#seen.set(sql, (entry = { uses: 0, name: null }));
    }
    if (entry.name === null && ++entry.uses > NamedStatements.PREPARE_AFTER && this.#named < NamedStatements.MAX_NAMED) {
      entry.name = `ars_${++this.#named}_${this.#generation}`;
    }
    return entry.name;
  }

  retire(sql: string): void {
    const entry = this.#seen.get(sql);
    if (entry?.name) entry.name = `ars_${++this.#named}_${++this.#generation}`;
  }
}

function isStalePlan(err: unknown): boolean {
  return (err as { code?: unknown } | null)?.code === '0A000' && /cached plan must not change result type/.test(String((err as Error).message));
}

export interface PostgresOptions {
  poolSize?: number;
  /** How long getting a connection may take: a new one, or a free slot of a full pool. */
  connectTimeoutMs?: number;
  /** Server-side ceiling on one statement and on a transaction left idle; 0: none. */
  statementTimeoutMs?: number;
  onError?: (err: Error) => void;
}

// The same defaults as config.ts (ARS_DB_*), for pools opened without a configuration (tests, bench).
const DEFAULT_CONNECT_TIMEOUT_MS = 5_000;
const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;
/** An idle connection's first keepalive probe: a peer that vanished (no RST) is noticed in about 20 s. */
const KEEPALIVE_DELAY_MS = 10_000;

/**
 * Every wait on the database is bounded (decisions.md "Bounded waits"): getting a connection (pool slot or
 * connect), each statement and each idle moment inside a transaction (server-side, sent at connect), and a dead
 * peer on an idle connection (TCP keepalive). The LISTEN connection gets the same settings.
 */
function clientConfig(url: string, opts: PostgresOptions): pg.ClientConfig {
  const statementTimeout = opts.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS;
  return {
    connectionString: url,
    types,
    connectionTimeoutMillis: opts.connectTimeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_DELAY_MS,
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout, idle_in_transaction_session_timeout: statementTimeout } : {}),
  };
}

/** A real PostgreSQL server. LISTEN uses one dedicated connection that reconnects on failure. */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Db> {
  const config = clientConfig(url, opts);
  const pool = new pg.Pool({ ...config, max: opts.poolSize ?? 10 });
  const statements = new NamedStatements();
  const onError = opts.onError ?? (() => {});
  pool.on('error', onError);
  try {
    await pool.query('select 1');
  } catch (err) {
    await pool.end().catch(() => {}); // a start that retries must not leave a pool behind per attempt
    throw err;
  }

  const channels = new Map<string, Set<(payload: string) => void>>();
  const resubscribed = new Set<() => void>();
  let listener: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let closed = false;

  let lost = false; // a listening connection was lost: the next one tells the subscribers to catch up
  const connectListener = async (): Promise<pg.Client> => {
    const client = new pg.Client(config);
    client.on('notification', (msg) => {
      for (const cb of channels.get(msg.channel) ?? []) cb(msg.payload ?? '');
    });
    const onLost = (err?: Error): void => {
      if (err) onError(err);
      if (listener !== client) return; // already handled (error then end)
      listener = null;
      lost = true;
      // Re-subscribe after a lost connection, retrying until it works.
      const retry = (): void => {
        if (!closed) setTimeout(() => void ensureListener().catch((e: Error) => (onError(e), retry())), 500).unref();
      };
      retry();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    try {
      await client.connect();
      for (const channel of channels.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
    } catch (err) {
      client.end().catch(() => {}); // a connection that could not LISTEN must not stay open
      throw err;
    }
    return client;
  };
  const ensureListener = async (): Promise<pg.Client> => {
    if (listener) return listener;
    connecting ??= connectListener().finally(() => (connecting = null));
    listener = await connecting;
    if (lost) {
      lost = false;
      for (const cb of resubscribed) cb();
    }
    return listener;
  };

  return {
    driver: 'postgres',
    ...wrap(pool, statements),
    async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('BEGIN');
        const result = await fn({ ...wrap(client, statements), exec: async (sql) => void (await client.query(sql)) });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        // A connection that cannot even roll back is dropped, not handed to the next caller.
        await client.query('ROLLBACK').catch((e: Error) => (broken = e));
        throw err;
      } finally {
        client.release(broken);
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
    },
    async maintain(sql) {
      const client = await pool.connect();
      let broken: Error | undefined;
      try {
        await client.query('SET statement_timeout = 0');
        await client.query(sql);
      } finally {
        // Back to the pool's ceiling; a connection that cannot take it back is dropped rather than reused without it.
        await client.query('RESET statement_timeout').catch((e: Error) => (broken = e));
        client.release(broken);
      }
    },
    async listen(channel, onMessage, onResubscribed) {
      if (onResubscribed) resubscribed.add(onResubscribed);
      let set = channels.get(channel);
      const isNew = !set;
      if (!set) channels.set(channel, (set = new Set()));
      set.add(onMessage);
      const client = await ensureListener();
      if (isNew) await client.query(`LISTEN ${quoteIdent(channel)}`);
      return async () => {
        set.delete(onMessage);
        if (onResubscribed) resubscribed.delete(onResubscribed);
      };
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    async close() {
      closed = true;
      await listener?.end().catch(() => {});
      await pool.end();
    },
  };
}

function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
