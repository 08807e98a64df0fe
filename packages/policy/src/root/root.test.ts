import { describe, expect, it } from 'vitest';
import type { Ed25519KeyPair } from '../crypto/ed25519.js';
import { NOW, rootPayload, rootText, testKey } from '../testing/fixtures.js';
import { verifyRootChain } from './root.js';

const [k1, k2, k3, k4, k5] = [1, 2, 3, 4, 5].map(testKey) as [
  Ed25519KeyPair,
  Ed25519KeyPair,
  Ed25519KeyPair,
  Ed25519KeyPair,
  Ed25519KeyPair,
];

// v1: root key k1. v2: rotates the root key to k3. v3: rotates to k4.
const v1 = rootText(rootPayload({ version: 1, rootKeys: [k1] }), [k1]);
const v2 = rootText(rootPayload({ version: 2, rootKeys: [k3] }), [k1, k3]);
const v3 = rootText(rootPayload({ version: 3, rootKeys: [k4] }), [k3, k4]);

function code(result: ReturnType<typeof verifyRootChain>): string {
  return result.ok ? 'ok' : result.code;
}

describe('trust root and rotation', () => {
  it('a valid chain is applied one version at a time', () => {
    const result = verifyRootChain([v1, v2, v3], { now: NOW });
    expect(code(result)).toBe('ok');
    if (result.ok) {
      expect(result.root.version).toBe(3);
      expect(result.versions).toEqual([1, 2, 3]);
    }
  });

  it('continues from a root already trusted, and accepts the trusted root again', () => {
    const first = verifyRootChain([v1], { now: NOW });
    if (!first.ok) throw new Error(first.message);
    expect(code(verifyRootChain([v2, v3], { now: NOW, trusted: first.root }))).toBe('ok');
    expect(code(verifyRootChain([v1, v2], { now: NOW, trusted: first.root }))).toBe('ok');
  });

  it('refuses a skipped version', () => {
    // v3' is signed by every key involved, so only the version gap is wrong.
    const v3all = rootText(rootPayload({ version: 3, rootKeys: [k4] }), [k1, k3, k4]);
    expect(code(verifyRootChain([v1, v3all], { now: NOW }))).toBe('ROOT_VERSION_SKIPPED');
    expect(code(verifyRootChain([v1, v3], { now: NOW }))).toBe('ROOT_ROTATION_UNSIGNED');
  });

  it('refuses a new root signed only by the new keys', () => {
    const v2new = rootText(rootPayload({ version: 2, rootKeys: [k3] }), [k3]);
    expect(code(verifyRootChain([v1, v2new], { now: NOW }))).toBe('ROOT_ROTATION_UNSIGNED');
  });

  it('refuses a new root signed only by the old keys', () => {
    const v2old = rootText(rootPayload({ version: 2, rootKeys: [k3] }), [k1]);
    expect(code(verifyRootChain([v1, v2old], { now: NOW }))).toBe('ROOT_SIGNATURES_INSUFFICIENT');
  });

  it('refuses an older root or another root with the same version', () => {
    // Same root keys across versions, so the signature check passes and the version decides.
    const w1 = rootText(rootPayload({ version: 1 }), [k1]);
    const w2 = rootText(rootPayload({ version: 2 }), [k1]);
    const w1b = rootText(rootPayload({ version: 1, policyKeys: [k5] }), [k1]);
    const trusted = verifyRootChain([w1, w2], { now: NOW });
    if (!trusted.ok) throw new Error(trusted.message);
    expect(code(verifyRootChain([w1], { now: NOW, trusted: trusted.root }))).toBe('ROOT_ROLLBACK');
    expect(code(verifyRootChain([w1, w1b], { now: NOW }))).toBe('ROOT_VERSION_CONFLICT');
  });

  it('checks thresholds of the previous and the new root role', () => {
    const t1 = rootText(rootPayload({ version: 1, rootKeys: [k1, k2, k3], rootThreshold: 2 }), [k1, k2]);
    expect(
      code(
        verifyRootChain(
          [rootText(rootPayload({ version: 1, rootKeys: [k1, k2, k3], rootThreshold: 2 }), [k1])],
          { now: NOW },
        ),
      ),
    ).toBe('ROOT_SIGNATURES_INSUFFICIENT');
    const t2payload = rootPayload({ version: 2, rootKeys: [k4, k5], rootThreshold: 2 });
    expect(code(verifyRootChain([t1, rootText(t2payload, [k1, k2, k4, k5])], { now: NOW }))).toBe('ok');
    expect(code(verifyRootChain([t1, rootText(t2payload, [k1, k4, k5])], { now: NOW }))).toBe(
      'ROOT_ROTATION_UNSIGNED',
    );
    expect(code(verifyRootChain([t1, rootText(t2payload, [k1, k2, k4, k4])], { now: NOW }))).toBe(
      'ROOT_SIGNATURES_INSUFFICIENT',
    );
  });

  it('checks expiry of the newest root only', () => {
    const old = rootText(rootPayload({ version: 1, expires: '2026-01-01T00:00:00Z' }), [k1]);
    const fresh = rootText(rootPayload({ version: 2 }), [k1]);
    expect(code(verifyRootChain([old], { now: NOW }))).toBe('ROOT_EXPIRED');
    expect(code(verifyRootChain([old, fresh], { now: NOW }))).toBe('ok');
  });

  it('refuses malformed roots with a reason', () => {
    const payload = rootPayload();
    payload.roles.policy.threshold = 2;
    expect(code(verifyRootChain([rootText(payload, [k1])], { now: NOW }))).toBe('ROOT_MALFORMED');
    const wrongId = rootPayload();
    const [id, entry] = Object.entries(wrongId.keys)[0]!;
    delete wrongId.keys[id];
    wrongId.keys['0'.repeat(64)] = entry;
    expect(code(verifyRootChain([rootText(wrongId, [k1])], { now: NOW }))).not.toBe('ok');
    expect(
      code(
        verifyRootChain([rootText({ ...rootPayload(), _type: 'ringfence/policy' } as never, [k1])], {
          now: NOW,
        }),
      ),
    ).toBe('ROOT_WRONG_TYPE');
    expect(code(verifyRootChain([], { now: NOW }))).toBe('ROOT_MISSING');
  });
});

describe('root payload bytes', () => {
  it('refuses a root payload that is not canonical JSON, even when properly signed', async () => {
    const { signBytes } = await import('../testing/fixtures.js');
    const { ROOT_PAYLOAD_TYPE } = await import('../envelope/envelope.js');
    const pretty = JSON.stringify(rootPayload(), null, 2);
    const text = JSON.stringify(signBytes(pretty, [testKey(1)], ROOT_PAYLOAD_TYPE));
    const result = verifyRootChain([text], { now: NOW });
    expect(result.ok ? 'ok' : result.code).toBe('ROOT_MALFORMED');
  });
});
