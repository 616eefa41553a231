// The idempotency_keys table (migration 0006; decisions.md "Idempotency keys"): one row per (agent, key), claimed by
// the statement that inserts the key's run, holding the first answer once it is known.
import type { Queryable } from '../storage/db.ts';
import { HEAD_COLUMNS, type RunHead, type RunInsertCompanion } from './runs-repo.ts';

/** A claimed key: what was asked (its fingerprint), its run as it is now, and the first answer if stored yet. */
export interface KeyRecord {
  fingerprint: string;
  expiresAt: Date;
  run: RunHead;
  /** The claiming request's answer: status and the exact JSON text it was sent. Null until known. */
  answer: { statusCode: number; body: string } | null;
}

const RUN_HEAD = HEAD_COLUMNS.split(', ').map((c) => `r.${c}`).join(', ');

interface KeyRow extends RunHead {
  fingerprint: string;
  expires_at: Date;
  status_code: number | null;
  response_body: string | null;
}

/** The key's row with its run's head, expired or not. */
export async function findKey(q: Queryable, agentId: number, key: string): Promise<KeyRecord | null> {
  const { rows } = await q.query<KeyRow>(
    `SELECT k.fingerprint, k.expires_at, k.status_code, k.response_body, ${RUN_HEAD}
     FROM idempotency_keys k JOIN runs r ON r.id = k.run_id
     WHERE k.agent_id = $1 AND k.key = $2`,
    [agentId, key],
  );
  const row = rows[0];
  if (!row) return null;
  const { fingerprint, expires_at, status_code, response_body, ...run } = row;
  return {
    fingerprint,
    expiresAt: expires_at,
    run,
    answer: status_code === null || response_body === null ? null : { statusCode: status_code, body: response_body },
  };
}

/** Frees an expired key for a new claim (a no-op if someone else already did, or it was claimed again meanwhile). */
export async function dropExpiredKey(q: Queryable, agentId: number, key: string, now: Date): Promise<void> {
  await q.query('DELETE FROM idempotency_keys WHERE agent_id = $1 AND key = $2 AND expires_at <= $3', [agentId, key, now]);
}

export interface KeyClaim {
  key: string;
  endpoint: string;
  fingerprint: string;
  expiresAt: Date;
}

/**
 * The claim as a CTE of the run's INSERT (runs-repo.ts): the key's row names the run just inserted, for its agent
 * and from its creation. A key already held fails the whole statement (isKeyConflict), so no run is written.
 */
export function claimWithRun(claim: KeyClaim): RunInsertCompanion {
  return (p) => `claimed AS (
    INSERT INTO idempotency_keys (agent_id, key, endpoint, fingerprint, run_id, created_at, expires_at)
    SELECT inserted.agent_id, ${p(claim.key)}::text, ${p(claim.endpoint)}::text, ${p(claim.fingerprint)}::text, inserted.id,
           inserted.created_at, ${p(claim.expiresAt)}::timestamptz
    FROM inserted)`;
}

/** The claim lost: another request holds the key (PostgreSQL made this one wait for that one's commit). */
export function isKeyConflict(err: unknown): boolean {
  const e = err as { code?: unknown; constraint?: unknown } | null;
  return e?.code === '23505' && e.constraint === 'idempotency_keys_pkey';
}

/** Keeps the claiming request's answer; the first one stored stays. */
export async function storeKeyAnswer(q: Queryable, agentId: number, key: string, fingerprint: string, statusCode: number, body: string): Promise<void> {
  await q.query(
    `UPDATE idempotency_keys SET status_code = $4, response_body = $5
     WHERE agent_id = $1 AND key = $2 AND fingerprint = $3 AND status_code IS NULL`,
    [agentId, key, fingerprint, statusCode, body],
  );
}

/** Retention: deletes up to `limit` expired keys in one short statement (by ctid, as alert-receipts-repo.ts). */
export async function deleteExpiredKeys(q: Queryable, now: Date, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM idempotency_keys WHERE ctid = ANY(ARRAY(
       SELECT ctid FROM idempotency_keys WHERE expires_at <= $1
       LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [now, limit],
  );
  return rowCount;
}
