// Measures where the service host's time goes without touching src/: a Db wrapper that times every statement
// (grouped by its first words) and a runtime registry whose adapters time invoke(). Both are cheap (one
// performance.now() pair per call) and are on for the service and its baselines alike.
import type { Db, Queryable, Tx } from '../src/storage/db.ts';
import type { RuntimeAdapter, RuntimeKind } from '../src/runtimes/runtime-adapter.ts';
import type { RuntimeRegistry } from '../src/runtimes/runtime-registry.ts';

export class CallProfile {
  readonly queries = new Map<string, { count: number; totalMs: number }>();
  invokes = { count: 0, totalMs: 0 };

  reset(): void {
    this.queries.clear();
    this.invokes = { count: 0, totalMs: 0 };
  }

  // Normalising a statement's text is cached: a regex over a 1 KB statement on every call was this profiler's
  // own largest cost, and it fell on the service (long statements) more than on the baselines.
  readonly #keys = new Map<string, string>();

  addQuery(sql: string, ms: number): void {
    let key = this.#keys.get(sql);
    if (key === undefined) {
      key = sql.replace(/\s+/g, ' ').trim().slice(0, 90);
      if (this.#keys.size > 1_000) this.#keys.clear();
      this.#keys.set(sql, key);
    }
    const e = this.queries.get(key) ?? { count: 0, totalMs: 0 };
    e.count++;
    e.totalMs += ms;
    this.queries.set(key, e);
  }
}

function timedQueryable(q: Queryable, profile: CallProfile): Queryable {
  return {
    async query<R>(sql: string, params?: readonly unknown[]) {
      const t0 = performance.now();
      try {
        return await q.query<R>(sql, params);
      } finally {
        profile.addQuery(sql, performance.now() - t0);
      }
    },
  };
}

export function profiledDb(db: Db, profile: CallProfile): Db {
  return {
    driver: db.driver,
    query: timedQueryable(db, profile).query,
    transaction: <T>(fn: (tx: Tx) => Promise<T>) =>
      db.transaction((tx) => {
        profile.addQuery('BEGIN … COMMIT (transaction)', 0);
        return fn({ ...timedQueryable(tx, profile), exec: (sql: string) => tx.exec(sql) });
      }),
    exec: (sql) => db.exec(sql),
    maintain: (sql) => db.maintain(sql),
    // The reconnect callback too: without it a wait whose notification was lost to a dropped LISTEN connection
    // would only be found by its backstop read.
    listen: (channel, onMessage, onResubscribed) => db.listen(channel, onMessage, onResubscribed),
    close: () => db.close(),
  };
}

export function profiledRuntimes(inner: RuntimeRegistry, profile: CallProfile): RuntimeRegistry {
  const wrapped = new Map<RuntimeKind, RuntimeAdapter>();
  return {
    get(kind) {
      let adapter = wrapped.get(kind);
      if (!adapter) {
        const target = inner.get(kind);
        // A Proxy rather than a subclass: the adapters keep state in #private fields, so `this` must stay theirs.
        adapter = new Proxy(target, {
          get(t, prop) {
            const value: unknown = Reflect.get(t, prop, t);
            if (prop === 'invoke') {
              return async (args: Parameters<RuntimeAdapter['invoke']>[0]) => {
                const t0 = performance.now();
                try {
                  return await t.invoke(args);
                } finally {
                  profile.invokes.count++;
                  profile.invokes.totalMs += performance.now() - t0;
                }
              };
            }
            return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(t) : value;
          },
        });
        wrapped.set(kind, adapter);
      }
      return adapter;
    },
    close: () => inner.close(),
  };
}
