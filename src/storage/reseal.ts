// `npm run reseal` (decisions.md "Storage and secrets"): every sealed value is rewritten under the current master
// key, bound to its place (v2). Values already current are only checked; the others are opened with whichever
// configured key sealed them (v1 values without a place) and sealed again. Batches of rows, each committed on its
// own, so the command can be stopped and run again; a value written meanwhile by the service is left alone (the
// UPDATE compares the old value), and so is a connection an OAuth refresh holds. When a run reports every value
// current, keys other than the current one can be removed from the configuration.
import { SealedSecretError, type SealedAt, type SecretBox } from '../lib/secrets.ts';
import type { Db } from './db.ts';
import { SEALED_COLUMNS, type SealedTable } from './sealed-columns.ts';

export interface ResealCount {
  table: string;
  column: string;
  /** Non-null values looked at. */
  values: number;
  resealed: number;
  /** Already v2 under the current key (and they open). */
  current: number;
  /** Changed by the service meanwhile, or held by an OAuth refresh: a later run takes them. */
  busy: number;
  /** Do not open: sealed under a key that is not configured, or for another place, or altered. */
  failed: number;
}

export interface ResealReport {
  keyId: string;
  counts: ResealCount[];
  /** One line per value that does not open: its place and why, never a key or a value. */
  failures: string[];
  /** Every value is now current: keys other than the current one may be removed. */
  complete: boolean;
}

/** Rows whose secret must not change under a running writer (oauth-refresh.ts compares secret_enc on store). */
const IN_USE: Partial<Record<SealedTable, string>> = {
  connections: 'refresh_lease_until IS NOT NULL AND refresh_lease_until >= now()',
};

export async function resealSecrets(db: Db, box: SecretBox, opts: { batchSize?: number; onBatch?: (c: ResealCount) => void } = {}): Promise<ResealReport> {
  const batchSize = opts.batchSize ?? 500;
  const counts: ResealCount[] = [];
  const failures: string[] = [];
  for (const table of Object.keys(SEALED_COLUMNS) as SealedTable[]) {
    for (const column of SEALED_COLUMNS[table]) {
      const count: ResealCount = { table, column, values: 0, resealed: 0, current: 0, busy: 0, failed: 0 };
      counts.push(count);
      let after: string | number | null = null;
      for (;;) {
        const rows = await readBatch(db, table, column, after, batchSize);
        if (rows.length === 0) break;
        after = rows[rows.length - 1]!.id;
        const writes: Array<{ id: string | number; from: string; to: string }> = [];
        for (const { id, sealed } of rows) {
          count.values++;
          const at: SealedAt = { table, column, row: id };
          try {
            const plain = box.open(sealed, at);
            if (box.isCurrent(sealed)) count.current++;
            else writes.push({ id, from: sealed, to: box.seal(plain, at) });
          } catch (err) {
            if (!(err instanceof SealedSecretError)) throw err;
            count.failed++;
            failures.push(err.message);
          }
        }
        const written = await writeBatch(db, table, column, writes);
        count.resealed += written;
        count.busy += writes.length - written;
        opts.onBatch?.(count);
      }
    }
  }
  const complete = counts.every((c) => c.busy === 0 && c.failed === 0);
  return { keyId: box.currentKeyId, counts, failures, complete };
}

// Table and column names come from SEALED_COLUMNS only, never from input.
async function readBatch(db: Db, table: string, column: string, after: string | number | null, limit: number) {
  const sql = `SELECT id, ${column} AS sealed FROM ${table} WHERE ${column} IS NOT NULL${after === null ? '' : ' AND id > $2'} ORDER BY id LIMIT $1`;
  const { rows } = await db.query<{ id: string | number; sealed: string }>(sql, after === null ? [limit] : [limit, after]);
  return rows;
}

/** One transaction per batch; each row only if it still holds the value that was opened. Returns rows written. */
async function writeBatch(db: Db, table: SealedTable, column: string, writes: Array<{ id: string | number; from: string; to: string }>): Promise<number> {
  if (writes.length === 0) return 0;
  const idle = IN_USE[table] ? ` AND NOT (${IN_USE[table]})` : '';
  return db.transaction(async (tx) => {
    let written = 0;
    for (const w of writes) {
      const res = await tx.query(`UPDATE ${table} SET ${column} = $3 WHERE id = $1 AND ${column} = $2${idle}`, [w.id, w.from, w.to]);
      written += res.rowCount;
    }
    return written;
  });
}
