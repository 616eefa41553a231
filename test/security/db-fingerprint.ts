// "Nothing was written": a digest of every row of every table, compared before and after a request. Rate-limit
// buckets are left out (a refused request is still counted, decisions.md "Rate limits"), and so is the
// migrations ledger.
import type { TestApp } from '../helpers/test-app.ts';

const NOT_DATA = new Set(['rate_limit_buckets', 'schema_migrations']);

export async function fingerprint(t: TestApp): Promise<Record<string, string>> {
  const { rows: tables } = await t.db.query<{ name: string }>("SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() ORDER BY 1");
  const out: Record<string, string> = {};
  for (const { name } of tables) {
    if (NOT_DATA.has(name)) continue;
    const { rows } = await t.db.query<{ n: number; digest: string }>(
      `SELECT count(*)::int AS n, md5(coalesce(string_agg(x::text, '|' ORDER BY x::text), '')) AS digest FROM "${name}" x`,
    );
    out[name] = `${rows[0]!.n}:${rows[0]!.digest}`;
  }
  return out;
}

/**
 * The fingerprint once the work earlier requests left running (a webhook run being invoked, a runtime call
 * recording its id) has stopped changing it, so a later comparison sees only the request under test.
 */
export async function settled(t: TestApp, quietMs = 30, timeoutMs = 5_000): Promise<Record<string, string>> {
  const deadline = Date.now() + timeoutMs;
  let last = await fingerprint(t);
  for (;;) {
    await new Promise((r) => setTimeout(r, quietMs));
    const next = await fingerprint(t);
    if (JSON.stringify(next) === JSON.stringify(last) || Date.now() > deadline) return next;
    last = next;
  }
}
