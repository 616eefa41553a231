// Idempotency-Key on the run-starting endpoints (issue 13; decisions.md "Idempotency keys"). The first request
// with a key for an agent claims it in its run's own INSERT statement; a later (or concurrent) request with the key
// finds the claim and starts nothing: it is a replay when it asks the same thing (same endpoint and body, by
// fingerprint), a refusal (422) when it asks something else. A key lives ARS_IDEMPOTENCY_TTL_HOURS (24 h); after
// that it may start a new run.
import { createHash } from 'node:crypto';
import type { AppContext } from '../context.ts';
import type { RateGuard } from '../rate-limits/rate-guard.ts';
import { canonicalJson } from '../lib/canonical-json.ts';
import type { RunInsertCompanion } from './runs-repo.ts';
import { claimWithRun, dropExpiredKey, findKey, isKeyConflict, storeKeyAnswer, type KeyRecord } from './idempotency-repo.ts';

export type { KeyRecord } from './idempotency-repo.ts';

const HOUR_MS = 3_600_000;

/** A request's key and what the request asks. */
export interface IdempotencyRequest {
  key: string;
  /** The route it was sent to (stored with the key, for operators). */
  endpoint: string;
  /** requestFingerprint: the same key with another fingerprint is another request. */
  fingerprint: string;
}

/** The key is held by an earlier request (maybe still running): this one starts nothing. */
export interface KeyTaken {
  kind: 'key_taken';
  /** Same endpoint and body as the request that claimed the key: a replay. Otherwise the key was reused (422). */
  sameRequest: boolean;
  record: KeyRecord;
}

export function isKeyTaken(value: unknown): value is KeyTaken {
  return (value as { kind?: unknown } | null)?.kind === 'key_taken';
}

/** A hash of the endpoint and of the body fields that change what the request does, key order aside. */
export function requestFingerprint(endpoint: string, fields: Record<string, unknown>): string {
  return createHash('sha256').update(canonicalJson({ endpoint, fields })).digest('base64url');
}

/**
 * Runs `start` (which inserts a run, handing `claim` to the insert) unless the key is already held. Without a key,
 * just `start(null)`. The key is looked up first, so a replay costs one read and no write; a claim lost to a
 * concurrent request (whose insert PostgreSQL made this one wait for) fails the insert, writing nothing, and is
 * then a replay too. An expired key is dropped and claimed anew.
 */
export async function idempotently<R>(
  ctx: AppContext,
  agentId: number,
  request: IdempotencyRequest | null | undefined,
  guard: RateGuard | null | undefined,
  start: (claim: RunInsertCompanion | null) => Promise<R>,
): Promise<R | KeyTaken> {
  if (!request) return start(null);
  const now = ctx.clock.now();
  const held = await findKey(ctx.db, agentId, request.key);
  if (held && held.expiresAt.getTime() > now.getTime()) return taken(held, request, guard);
  if (held) await dropExpiredKey(ctx.db, agentId, request.key, now);
  const expiresAt = new Date(now.getTime() + ctx.config.idempotencyTtlHours * HOUR_MS);
  try {
    return await start(claimWithRun({ key: request.key, endpoint: request.endpoint, fingerprint: request.fingerprint, expiresAt }));
  } catch (err) {
    if (!isKeyConflict(err)) throw err;
    const winner = await findKey(ctx.db, agentId, request.key);
    if (!winner) throw err; // claimed and gone within one statement's wait: nothing sensible to answer
    return taken(winner, request, guard);
  }
}

function taken(record: KeyRecord, request: IdempotencyRequest, guard: RateGuard | null | undefined): KeyTaken {
  const sameRequest = record.fingerprint === request.fingerprint;
  // A replay starts nothing at the runtime, so it does not use up the start limit (spec 8.1). A key reused for
  // another request is a refusal like any 4xx, counted after its answer.
  if (sameRequest) guard?.waive();
  return { kind: 'key_taken', sameRequest, record };
}

/** The claiming request's answer, once known (the first one stored stays). */
export function storeAnswer(ctx: AppContext, agentId: number, request: IdempotencyRequest, statusCode: number, body: string): Promise<void> {
  return storeKeyAnswer(ctx.db, agentId, request.key, request.fingerprint, statusCode, body);
}

/** The stored answer of a key, if the claiming request has answered by now. */
export async function storedAnswer(ctx: AppContext, agentId: number, key: string): Promise<KeyRecord['answer']> {
  return (await findKey(ctx.db, agentId, key))?.answer ?? null;
}
