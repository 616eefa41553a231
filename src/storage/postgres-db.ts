import pg from 'pg';
import { INT8_OID, parseInt8, type Db, type Queryable, type QueryResult, type Tx } from './db.ts';

const types = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === INT8_OID ? parseInt8 : pg.types.getTypeParser(oid, format as 'text')) as typeof pg.types.getTypeParser,
};

function wrap(q: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>> {
      const res = await q.query(sql, params as unknown[] | undefined);
      return { rows: res.rows as R[], rowCount: res.rowCount ?? res.rows.length };
    },
  };
}

export interface PostgresOptions {
  poolSize?: number;
  onError?: (err: Error) => void;
}

/** A real PostgreSQL server. LISTEN uses one dedicated connection that reconnects on failure. */
export async function openPostgres(url: string, opts: PostgresOptions = {}): Promise<Db> {
  const pool = new pg.Pool({ connectionString: url, max: opts.poolSize ?? 10, types });
  const onError = opts.onError ?? (() => {});
  pool.on('error', onError);
  await pool.query('select 1');

  const channels = new Map<string, Set<(payload: string) => void>>();
  const resubscribed = new Set<() => void>();
  let listener: pg.Client | null = null;
  let connecting: Promise<pg.Client> | null = null;
  let closed = false;

  let lost = false; // a listening connection was lost: the next one tells the subscribers to catch up
  const connectListener = async (): Promise<pg.Client> => {
    const client = new pg.Client({ connectionString: url, types });
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
    await client.connect();
    for (const channel of channels.keys()) await client.query(`LISTEN ${quoteIdent(channel)}`);
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
    ...wrap(pool),
    async transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T> {
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const result = await fn({ ...wrap(client), exec: async (sql) => void (await client.query(sql)) });
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        client.release();
      }
    },
    exec: async (sql) => {
      await pool.query(sql);
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
