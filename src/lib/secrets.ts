// Secrets at rest (decisions.md "Storage and secrets"). Keys are random and prefixed; we keep a SHA-256 digest of
// them for lookup and constant-time comparison (256 bits of entropy need no pepper). Secrets we must read back
// (agent key, webhook token, zone secret, connection and runtime secrets) are sealed with AES-256-GCM under one of
// several master keys, named by key id, and bound to the table, column and row they are stored in.
import { createCipheriv, createDecipheriv, createHmac, hash, randomBytes, timingSafeEqual } from 'node:crypto';

export type KeyKind = 'ingest' | 'agent' | 'webhook' | 'zone';

const PREFIX: Record<KeyKind, string> = {
  ingest: 'ars_ingest_',
  agent: 'ars_agent_',
  webhook: 'ars_whk_',
  zone: 'ars_zone_',
};

/** A new high-entropy secret, prefixed so a leaked one is recognizable (and scannable). */
export function generateSecret(kind: KeyKind): string {
  return PREFIX[kind] + randomBytes(32).toString('base64url');
}

// One-shot crypto.hash: half the cost of createHash().update().digest(), and it runs on every authenticated call.
export function digest(secret: string): Buffer {
  return hash('sha256', secret, 'buffer');
}

/** Constant-time: compares digests, so neither length nor content leaks through timing. */
export function secretMatches(presented: string, storedDigest: Uint8Array | null | undefined): boolean {
  if (!storedDigest || storedDigest.length !== 32) return false;
  return timingSafeEqual(digest(presented), storedDigest);
}

export function constantTimeEqual(a: string, b: string): boolean {
  return timingSafeEqual(digest(a), digest(b));
}

/** One master key and the id that names it in every value it seals. */
export interface MasterKey {
  id: string;
  key: Buffer;
}

/** The configured master keys; `current` names the one that seals, the others only open. */
export interface Keyring {
  current: string;
  keys: readonly MasterKey[];
}

/** The key id of a single ARS_MASTER_KEY and of the embedded default's generated master.key. */
export const DEFAULT_KEY_ID = 'default';
export const KEY_ID_PATTERN = /^[A-Za-z0-9_-]{1,32}$/;

export function singleKeyring(key: Buffer): Keyring {
  return { current: DEFAULT_KEY_ID, keys: [{ id: DEFAULT_KEY_ID, key }] };
}

/**
 * Where a sealed value is stored. It becomes the AES-GCM additional data `table:column:row`, so a value copied
 * into another row or column no longer opens.
 */
export interface SealedAt {
  table: string;
  column: string;
  row: string | number;
}

/** A sealed value that cannot be opened. The message names the key id and the place, never a key or a value. */
export class SealedSecretError extends Error {
  override name = 'SealedSecretError';
}

interface Parsed {
  version: 'v1' | 'v2';
  keyId: string;
  iv: Buffer;
  tag: Buffer;
  ciphertext: Buffer;
}

const where = (at: SealedAt): string => `${at.table}.${at.column} of row ${at.row}`;
const additionalData = (at: SealedAt): Buffer => Buffer.from(`${at.table}:${at.column}:${at.row}`, 'utf8');
const B64URL = /^[A-Za-z0-9_-]*$/;

/**
 * v2 (sealed now): `v2:<keyId>:<iv>:<tag>:<ciphertext>`, base64url parts, AES-256-GCM with the place as
 * additional data. v1 (before key ids were configured): `v1:<first 8 hex of SHA-256(key)>:<iv>:<ciphertext+tag>`,
 * base64, no additional data; it still opens under whichever configured key has that fingerprint, until
 * `npm run reseal` rewrites it as v2.
 */
function parse(sealed: string): Parsed | null {
  const parts = sealed.split(':');
  if (parts[0] === 'v2' && parts.length === 5 && parts.slice(2).every((p) => B64URL.test(p))) {
    const [, keyId, iv, tag, ciphertext] = parts as [string, string, string, string, string];
    return { version: 'v2', keyId, iv: Buffer.from(iv, 'base64url'), tag: Buffer.from(tag, 'base64url'), ciphertext: Buffer.from(ciphertext, 'base64url') };
  }
  if (parts[0] === 'v1' && parts.length === 4 && parts[2] && parts[3]) {
    const body = Buffer.from(parts[3], 'base64');
    if (body.length < 16) return null;
    return { version: 'v1', keyId: parts[1]!, iv: Buffer.from(parts[2], 'base64'), tag: body.subarray(body.length - 16), ciphertext: body.subarray(0, body.length - 16) };
  }
  return null;
}

const fingerprint = (key: Buffer): string => hash('sha256', key, 'hex').slice(0, 8);

export class SecretBox {
  readonly currentKeyId: string;
  private readonly current: Buffer;
  private readonly byId = new Map<string, Buffer>();
  private readonly byFingerprint = new Map<string, Buffer>();

  constructor(keyring: Keyring) {
    for (const { id, key } of keyring.keys) {
      if (!KEY_ID_PATTERN.test(id)) throw new Error(`master key id "${id}" must be 1 to 32 letters, digits, "_" or "-"`);
      if (key.length !== 32) throw new Error(`master key "${id}" must be 32 bytes`);
      if (this.byId.has(id)) throw new Error(`master key id "${id}" is configured twice`);
      this.byId.set(id, key);
      this.byFingerprint.set(fingerprint(key), key);
    }
    const current = this.byId.get(keyring.current);
    if (!current) throw new Error(`the sealing master key "${keyring.current}" is not among the configured keys`);
    this.currentKeyId = keyring.current;
    this.current = current;
  }

  seal(plaintext: string, at: SealedAt): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.current, iv);
    cipher.setAAD(additionalData(at));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v2', this.currentKeyId, iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join(':');
  }

  open(sealed: string, at: SealedAt): string {
    const parsed = parse(sealed);
    if (!parsed) throw new SealedSecretError(`${where(at)} is not a sealed secret`);
    const key = parsed.version === 'v2' ? this.byId.get(parsed.keyId) : this.byFingerprint.get(parsed.keyId);
    if (!key) {
      const named = parsed.version === 'v2' ? `master key "${parsed.keyId}"` : `a master key with fingerprint ${parsed.keyId} (v1)`;
      throw new SealedSecretError(`${where(at)} was sealed under ${named}, which is not configured (configured: ${[...this.byId.keys()].join(', ')})`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, parsed.iv, { authTagLength: 16 });
      if (parsed.version === 'v2') decipher.setAAD(additionalData(at));
      decipher.setAuthTag(parsed.tag);
      return Buffer.concat([decipher.update(parsed.ciphertext), decipher.final()]).toString('utf8');
    } catch {
      throw new SealedSecretError(`${where(at)} does not open: it was sealed for another row or column, or altered`);
    }
  }

  /**
   * A keyed digest (HMAC-SHA256, base64url) with the current master key, for values the service signs and later
   * checks itself. `purpose` separates uses, so a digest made for one never verifies as another.
   */
  sign(purpose: string, message: string): string {
    return createHmac('sha256', this.current).update(`${purpose}\0${message}`).digest('base64url');
  }

  /** Whether `signature` is sign(purpose, message), in constant time. */
  verify(purpose: string, message: string, signature: string): boolean {
    return constantTimeEqual(this.sign(purpose, message), signature);
  }

  sealJson(value: unknown, at: SealedAt): string {
    return this.seal(JSON.stringify(value), at);
  }

  openJson<T>(sealed: string, at: SealedAt): T {
    return JSON.parse(this.open(sealed, at)) as T;
  }

  /** Sealed in today's format (v2, bound to its place) under the current key: nothing for the re-seal to do. */
  isCurrent(sealed: string): boolean {
    const parsed = parse(sealed);
    return parsed?.version === 'v2' && parsed.keyId === this.currentKeyId;
  }
}
