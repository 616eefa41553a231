// Secrets at rest (decisions.md "Secrets at rest"). Keys are random and prefixed; we keep a SHA-256 digest of
// them for lookup and constant-time comparison (256 bits of entropy need no pepper). Secrets we must read back
// (agent key, webhook token, zone secret, connection and runtime secrets) are sealed with AES-256-GCM under the
// master key; the ciphertext names the key id so the master key can be rotated.
import { createCipheriv, createDecipheriv, hash, randomBytes, timingSafeEqual } from 'node:crypto';

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

export class SecretBox {
  private readonly keyId: string;

  constructor(private readonly masterKey: Buffer) {
    if (masterKey.length !== 32) throw new Error('master key must be 32 bytes');
    this.keyId = hash('sha256', masterKey, 'hex').slice(0, 8);
  }

  seal(plaintext: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.masterKey, iv);
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return `v1:${this.keyId}:${iv.toString('base64')}:${body.toString('base64')}`;
  }

  open(sealed: string): string {
    const [version, keyId, ivB64, bodyB64] = sealed.split(':');
    if (version !== 'v1' || !ivB64 || !bodyB64) throw new Error('unrecognized sealed secret');
    if (keyId !== this.keyId) throw new Error(`secret was sealed under master key ${keyId}, not the configured one`);
    const body = Buffer.from(bodyB64, 'base64');
    const decipher = createDecipheriv('aes-256-gcm', this.masterKey, Buffer.from(ivB64, 'base64'));
    decipher.setAuthTag(body.subarray(body.length - 16));
    return Buffer.concat([decipher.update(body.subarray(0, body.length - 16)), decipher.final()]).toString('utf8');
  }

  sealJson(value: unknown): string {
    return this.seal(JSON.stringify(value));
  }

  openJson<T>(sealed: string): T {
    return JSON.parse(this.open(sealed)) as T;
  }
}
