// Every column that holds a sealed secret, and the place each value is bound to (decisions.md "Storage and
// secrets"). Each value is sealed for `table:column:id`; ids are known before the INSERT: uuids are made by the
// service, bigint identities are reserved from their sequence (reserveId). `npm run reseal` walks this list, and
// a test checks it against every `*_enc` column of the schema.
import type { SealedAt } from '../lib/secrets.ts';
import type { Queryable } from './db.ts';

export const SEALED_COLUMNS = {
  runtimes: ['api_key_enc', 'alert_secret_enc'],
  agents: ['agent_key_enc', 'webhook_token_enc', 'zone_secret_enc', 'credentials_secret_enc'],
  connections: ['secret_enc'],
  webhook_actions: ['signing_secret_enc'],
} as const;

export type SealedTable = keyof typeof SEALED_COLUMNS;
export type SealedColumn<T extends SealedTable> = (typeof SEALED_COLUMNS)[T][number];

/** The place a value of `table.column` in row `id` is sealed for. */
export function sealedAt<T extends SealedTable>(table: T, column: SealedColumn<T>, id: string | number): SealedAt {
  return { table, column, row: id };
}

/**
 * The id the next row of a table with a bigint identity will have, taken from its sequence now so the row's
 * secrets can be sealed for it before the INSERT (which then names the id: OVERRIDING SYSTEM VALUE).
 */
export async function reserveId(q: Queryable, table: 'agents' | 'runtimes'): Promise<number> {
  const { rows } = await q.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('${table}', 'id')) AS id`);
  return rows[0]!.id;
}
