import { describe, expect, it } from 'vitest';
import { generateSigningSecret, signWebhook, verifyWebhook } from '../../src/events/standard-webhooks.ts';

// Published Standard Webhooks test vector (standard-webhooks reference libraries).
const VECTOR = {
  secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  id: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
  timestamp: new Date(1614265330 * 1000),
  body: '{"test": 2432232314}',
  signature: 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
};

describe('Standard Webhooks signing', () => {
  it('spec 6 (decisions "Events"): matches the published Standard Webhooks test vector', () => {
    expect(signWebhook(VECTOR)).toEqual({
      'webhook-id': VECTOR.id,
      'webhook-timestamp': '1614265330',
      'webhook-signature': VECTOR.signature,
    });
  });

  it('spec 6: the vector verifies on the receiver side', () => {
    const headers = { 'webhook-id': VECTOR.id, 'webhook-timestamp': '1614265330', 'webhook-signature': VECTOR.signature };
    expect(verifyWebhook(headers, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(true);
    // The key is the base64 after the prefix; the bare base64 form is accepted too, as the reference libraries do.
    expect(verifyWebhook(headers, VECTOR.body, VECTOR.secret.slice('whsec_'.length), VECTOR.timestamp)).toBe(true);
  });

  it('spec 6: the timestamp is whole unix seconds (milliseconds are dropped)', () => {
    const signed = signWebhook({ ...VECTOR, timestamp: new Date(1614265330 * 1000 + 999) });
    expect(signed['webhook-timestamp']).toBe('1614265330');
    expect(signed['webhook-signature']).toBe(VECTOR.signature);
  });

  it('spec 6: generated secrets are whsec_ + base64 of 24 random bytes', () => {
    const a = generateSigningSecret();
    const b = generateSigningSecret();
    expect(a).toMatch(/^whsec_[A-Za-z0-9+/]{32}$/);
    expect(Buffer.from(a.slice(6), 'base64')).toHaveLength(24);
    expect(a).not.toBe(b);
    const now = new Date();
    const body = JSON.stringify({ run: { id: 1 }, output: { ok: true } });
    expect(verifyWebhook(signWebhook({ id: 'msg_1', timestamp: now, body, secret: a }), body, a, now)).toBe(true);
  });

  it('spec 6: tampering with body, id or timestamp breaks the signature', () => {
    const signed = signWebhook(VECTOR);
    const at = VECTOR.timestamp;
    expect(verifyWebhook(signed, '{"test": 2432232315}', VECTOR.secret, at)).toBe(false);
    expect(verifyWebhook({ ...signed, 'webhook-id': 'msg_other' }, VECTOR.body, VECTOR.secret, at)).toBe(false);
    expect(verifyWebhook({ ...signed, 'webhook-timestamp': '1614265331' }, VECTOR.body, VECTOR.secret, at)).toBe(false);
    expect(verifyWebhook(signed, VECTOR.body, generateSigningSecret(), at)).toBe(false);
  });

  it('spec 6: timestamps outside the tolerance are refused either way', () => {
    const signed = signWebhook(VECTOR);
    const t = VECTOR.timestamp.getTime();
    expect(verifyWebhook(signed, VECTOR.body, VECTOR.secret, new Date(t + 300_000))).toBe(true);
    expect(verifyWebhook(signed, VECTOR.body, VECTOR.secret, new Date(t + 301_000))).toBe(false);
    expect(verifyWebhook(signed, VECTOR.body, VECTOR.secret, new Date(t - 301_000))).toBe(false);
    expect(verifyWebhook(signed, VECTOR.body, VECTOR.secret, new Date(t + 3_600_000), 3600)).toBe(true);
  });

  it('spec 6: a space-separated signature list matches if any v1 entry matches', () => {
    const signed = signWebhook(VECTOR);
    const list = `v1,Zm9vYmFy v1a,${VECTOR.signature.slice(3)} ${VECTOR.signature}`;
    expect(verifyWebhook({ ...signed, 'webhook-signature': list }, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(true);
    // Only v1 entries count: the right MAC under another version label is not a match.
    const wrongVersion = `v1a,${VECTOR.signature.slice(3)} v2,${VECTOR.signature.slice(3)}`;
    expect(verifyWebhook({ ...signed, 'webhook-signature': wrongVersion }, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(false);
  });

  it('spec 6: header names are case-insensitive; missing or malformed headers fail', () => {
    const signed = signWebhook(VECTOR);
    const upper = {
      'Webhook-Id': signed['webhook-id'],
      'WEBHOOK-TIMESTAMP': signed['webhook-timestamp'],
      'Webhook-Signature': signed['webhook-signature'],
    };
    expect(verifyWebhook(upper, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(true);
    for (const name of ['webhook-id', 'webhook-timestamp', 'webhook-signature'] as const) {
      const { [name]: _dropped, ...rest } = signed;
      expect(verifyWebhook(rest, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(false);
    }
    for (const ts of ['', 'abc', '1614265330.5', '-1614265330', '1e9']) {
      expect(verifyWebhook({ ...signed, 'webhook-timestamp': ts }, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(false);
    }
    for (const sig of ['', 'v1,', 'v1', 'garbage', 'v1,!!!!']) {
      expect(verifyWebhook({ ...signed, 'webhook-signature': sig }, VECTOR.body, VECTOR.secret, VECTOR.timestamp)).toBe(false);
    }
  });

  it('spec 6: an invalid secret is a configuration error, not a silent weak key', () => {
    expect(() => signWebhook({ ...VECTOR, secret: 'whsec_' })).toThrow(TypeError);
    expect(() => signWebhook({ ...VECTOR, secret: 'whsec_not base64!' })).toThrow(TypeError);
    expect(() => verifyWebhook(signWebhook(VECTOR), VECTOR.body, 'whsec_***', VECTOR.timestamp)).toThrow(TypeError);
  });

  it('spec 6: the body is signed as exact text, including non-ASCII', () => {
    const body = '{"name":"Zoë ✓","nul":"\\u0000"}';
    const now = new Date();
    const signed = signWebhook({ id: 'msg_x', timestamp: now, body, secret: VECTOR.secret });
    expect(verifyWebhook(signed, body, VECTOR.secret, now)).toBe(true);
    expect(verifyWebhook(signed, body.normalize('NFD'), VECTOR.secret, now)).toBe(false);
  });
});
