// A value as the SecretBox of before master-key ids sealed it (decisions.md "Storage and secrets"): v1, the key's
// fingerprint, base64 parts, no additional data. Databases written then hold these until `npm run reseal`.
import { createCipheriv, hash, randomBytes } from 'node:crypto';

export function sealV1(key: Buffer, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final(), cipher.getAuthTag()]);
  return `v1:${hash('sha256', key, 'hex').slice(0, 8)}:${iv.toString('base64')}:${body.toString('base64')}`;
}
