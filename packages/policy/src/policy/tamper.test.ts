// The tamper suite: every case starts from a policy that verifies, changes one thing, and must be
// refused with the expected reason. The control at the top proves each case can fail.
// Also part of the suite, beside the code they test: root rotation (valid, skipped, signed by new
// keys only, rollback) in root/root.test.ts; group-writable, foreign-owned and symlinked installed
// files in installed/installed.test.ts; tweetnacl accepting what verifyStrict refuses in
// crypto/ed25519.test.ts.
import { describe, expect, it } from 'vitest';
import { canonicalize, sha256Hex } from '../canonical/canonicalize.js';
import { GROUP_ORDER } from '../crypto/ed25519.js';
import { decodeBase64Strict, encodeBase64 } from '../envelope/base64.js';
import { type Envelope, ROOT_PAYLOAD_TYPE } from '../envelope/envelope.js';
import { buildRoot, signRoot } from '../root/create.js';
import { verifyRootChain } from '../root/root.js';
import {
  basePolicy,
  NOW,
  policyText,
  rootPayload,
  signBytes,
  testKey,
  trustedRoot,
} from '../testing/fixtures.js';
import { verifyPolicy } from './verify.js';

const root = trustedRoot();

function verify(text: string, extra: Partial<Parameters<typeof verifyPolicy>[1]> = {}) {
  return verifyPolicy(text, { root, now: NOW, ...extra });
}

function expectCode(result: ReturnType<typeof verifyPolicy>, code: string) {
  if (result.ok) throw new Error(`expected ${code}, but the policy verified`);
  expect(result.code).toBe(code);
  expect(result.message.length).toBeGreaterThan(20);
}

function mutate(text: string, change: (env: Envelope) => void): string {
  const env = JSON.parse(text) as Envelope;
  change(env);
  return JSON.stringify(env);
}

function malleate(sigB64: string): string {
  const sig = decodeBase64Strict(sigB64)!;
  let s = 0n;
  for (let i = 63; i >= 32; i--) s = (s << 8n) | BigInt(sig[i]!);
  s += GROUP_ORDER;
  const out = Uint8Array.from(sig);
  for (let i = 32; i < 64; i++) {
    out[i] = Number(s & 0xffn);
    s >>= 8n;
  }
  return encodeBase64(out);
}

describe('tamper suite', () => {
  it('control: the untouched policy verifies', () => {
    const result = verify(policyText());
    expect(result.ok).toBe(true);
    if (result.ok) {
      expect(result.policy.name).toBe('example-corp');
      expect(result.signers).toEqual([root.payload.roles.policy.keyids[0]]);
      expect(result.digest).toBe(`sha256:${sha256Hex(canonicalize(basePolicy()))}`);
    }
  });

  it('one flipped byte in the payload', () => {
    const text = mutate(policyText(), (env) => {
      const bytes = decodeBase64Strict(env.payload)!;
      const i = bytes.indexOf('7'.charCodeAt(0)); // the version digit
      bytes[i] = '8'.charCodeAt(0);
      env.payload = encodeBase64(bytes);
    });
    expectCode(verify(text), 'POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('a signature by a key outside the policy role (even a root key)', () => {
    expectCode(verify(policyText(basePolicy(), [testKey(9)])), 'POLICY_SIGNATURES_INSUFFICIENT');
    expectCode(verify(policyText(basePolicy(), [testKey(1)])), 'POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('a malleated signature (S + L)', () => {
    const text = mutate(policyText(), (env) => {
      env.signatures[0]!.sig = malleate(env.signatures[0]!.sig);
    });
    expectCode(verify(text), 'POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('a small-order public key in the trust root', () => {
    const small = new Uint8Array(32);
    small[0] = 1; // the identity point
    const payload = rootPayload();
    const keyid = sha256Hex(small);
    payload.keys[keyid] = { keytype: 'ed25519', public: encodeBase64(small) };
    payload.roles.policy.keyids = [keyid];
    const result = verifyRootChain([JSON.stringify(signRoot(payload, [testKey(1)]))], { now: NOW });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.code).toBe('ROOT_KEY_INVALID');
  });

  it('a forged signature for a small-order key is not counted even if a root lists the key', () => {
    // Bypass root validation to prove the envelope check stands on its own.
    const small = new Uint8Array(32);
    small[0] = 1;
    const keyid = sha256Hex(small);
    const forgedRoot = { ...root, payload: structuredClone(root.payload) };
    forgedRoot.payload.keys[keyid] = { keytype: 'ed25519', public: encodeBase64(small) };
    forgedRoot.payload.roles.policy = { keyids: [keyid], threshold: 1 };
    const forgedSig = new Uint8Array(64);
    forgedSig[0] = 1;
    const text = mutate(policyText(), (env) => {
      env.signatures = [{ keyid, sig: encodeBase64(forgedSig) }];
    });
    expectCode(verifyPolicy(text, { root: forgedRoot, now: NOW }), 'POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('a wrong payloadType (a root presented as a policy, or a retyped envelope)', () => {
    expectCode(
      verify(JSON.stringify(signBytes(canonicalize(basePolicy()), [testKey(2)], ROOT_PAYLOAD_TYPE))),
      'ENVELOPE_WRONG_PAYLOAD_TYPE',
    );
    // Retyping after signing also breaks the signature, since PAE binds the type.
    const retyped = mutate(policyText(), (env) => {
      env.payloadType = 'application/vnd.ringfence.policy+JSON';
    });
    expectCode(verify(retyped), 'ENVELOPE_WRONG_PAYLOAD_TYPE');
  });

  it('threshold not met', () => {
    const k2 = testKey(2);
    const k3 = testKey(3);
    const twoOfTwo = trustedRoot(rootPayload({ policyKeys: [k2, k3], policyThreshold: 2 }));
    expectCode(
      verifyPolicy(policyText(basePolicy(), [k2]), { root: twoOfTwo, now: NOW }),
      'POLICY_SIGNATURES_INSUFFICIENT',
    );
    expect(verifyPolicy(policyText(basePolicy(), [k2, k3]), { root: twoOfTwo, now: NOW }).ok).toBe(true);
  });

  it('the same key signing twice is counted once', () => {
    const k2 = testKey(2);
    const k3 = testKey(3);
    const twoOfTwo = trustedRoot(rootPayload({ policyKeys: [k2, k3], policyThreshold: 2 }));
    const twice = policyText(basePolicy(), [k2, k2]);
    expect((JSON.parse(twice) as Envelope).signatures).toHaveLength(2);
    expectCode(verifyPolicy(twice, { root: twoOfTwo, now: NOW }), 'POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('an expired policy (and one that expires exactly now)', () => {
    expectCode(verify(policyText(basePolicy({ expires: '2026-05-31T23:59:59Z' }))), 'POLICY_EXPIRED');
    expectCode(verify(policyText(basePolicy({ expires: new Date(NOW).toISOString() }))), 'POLICY_EXPIRED');
  });

  it('a policy that expires sooner than --min-days-valid', () => {
    const text = policyText(basePolicy({ expires: '2026-06-10T00:00:00Z' }));
    expect(verify(text, { minDaysValid: 9 }).ok).toBe(true);
    expectCode(verify(text, { minDaysValid: 10 }), 'POLICY_EXPIRES_SOON');
  });

  it('an expired root', () => {
    const payload = rootPayload({ expires: '2026-05-01T00:00:00Z' });
    const result = verifyRootChain([JSON.stringify(signRoot(payload, [testKey(1)]))], { now: NOW });
    expect(result.ok).toBe(false);
    if (!result.ok) expect(result.code).toBe('ROOT_EXPIRED');
  });

  it('version rollback', () => {
    const seen = () => ({ version: 8, digest: 'sha256:0' });
    expectCode(verify(policyText(), { seen }), 'POLICY_ROLLBACK');
  });

  it('the same version with other bytes', () => {
    const original = verify(policyText());
    if (!original.ok) throw new Error('control failed');
    const seen = () => ({ version: 7, digest: original.digest });
    expect(verify(policyText(), { seen }).ok).toBe(true);
    expectCode(
      verify(policyText(basePolicy({ default_action: 'deny' })), { seen }),
      'POLICY_VERSION_CONFLICT',
    );
  });

  it('an unknown field, at the top and nested', () => {
    expectCode(verify(policyText({ ...basePolicy(), debug: true })), 'POLICY_SCHEMA');
    const nested = basePolicy();
    (nested.mcp![0] as unknown as Record<string, unknown>).allow_everything = true;
    expectCode(verify(policyText(nested)), 'POLICY_SCHEMA');
  });

  it('a duplicate JSON key inside the signed payload', () => {
    const canonical = canonicalize(basePolicy());
    const duplicated = canonical.replace('"version":7', '"version":7,"version":99');
    expect(duplicated).not.toBe(canonical);
    expectCode(verify(JSON.stringify(signBytes(duplicated, [testKey(2)]))), 'POLICY_MALFORMED');
  });

  it('a malformed digest (pin or image)', () => {
    const badPin = basePolicy();
    badPin.mcp![0]!.pins = [{ tool: 'list_issues', digest: `sha256:${'B'.repeat(64)}` }];
    expectCode(verify(policyText(badPin)), 'POLICY_SCHEMA');
    const shortPin = basePolicy();
    shortPin.mcp![0]!.pins = [{ tool: 'list_issues', digest: `sha256:${'b'.repeat(63)}` }];
    expectCode(verify(policyText(shortPin)), 'POLICY_SCHEMA');
    expectCode(verify(policyText(basePolicy({ allowed_mcp: ['ghcr.io/x/y@sha256:abc'] }))), 'POLICY_SCHEMA');
    expectCode(verify(policyText(basePolicy({ allowed_mcp: ['sha256:abc'] }))), 'POLICY_SCHEMA');
  });

  it('prompt pins: one per prompt, beside tool pins of the same name; never both names in one pin or rule', () => {
    const DIGEST = `sha256:${'b'.repeat(64)}`;
    const both = basePolicy();
    both.mcp![0]!.pins = [
      { tool: 'triage', digest: DIGEST },
      { prompt: 'triage', digest: DIGEST },
    ];
    expect(verify(policyText(both)).ok).toBe(true);
    const twice = basePolicy();
    twice.mcp![0]!.pins = [
      { prompt: 'triage', digest: DIGEST },
      { prompt: 'triage', digest: DIGEST },
    ];
    expectCode(verify(policyText(twice)), 'POLICY_SCHEMA');
    const mixed = basePolicy();
    mixed.mcp![0]!.pins = [{ tool: 'a', prompt: 'a', digest: DIGEST } as never];
    expectCode(verify(policyText(mixed)), 'POLICY_SCHEMA');
    const rule = basePolicy({ rules: [{ id: 'r', match: { tool: 'a', prompt: 'b' }, action: 'deny' }] });
    expectCode(verify(policyText(rule)), 'POLICY_SCHEMA');
  });

  it('resource and template pins: by URI and URI template, one each, never mixed with another kind', () => {
    const DIGEST = `sha256:${'c'.repeat(64)}`;
    const good = basePolicy();
    good.mcp![0]!.pins = [
      { resource: 'test://static-text', digest: DIGEST },
      { template: 'test://template/{id}/data', digest: DIGEST },
      { tool: 'static', digest: DIGEST },
    ];
    expect(verify(policyText(good)).ok).toBe(true);
    const twice = basePolicy();
    twice.mcp![0]!.pins = [
      { template: 'test://t/{id}', digest: DIGEST },
      { template: 'test://t/{id}', digest: DIGEST },
    ];
    expectCode(verify(policyText(twice)), 'POLICY_SCHEMA');
    const mixed = basePolicy();
    mixed.mcp![0]!.pins = [{ resource: 'test://a', template: 'test://a', digest: DIGEST } as never];
    expectCode(verify(policyText(mixed)), 'POLICY_SCHEMA');
    const empty = basePolicy();
    empty.mcp![0]!.pins = [{ resource: '', digest: DIGEST }];
    expectCode(verify(policyText(empty)), 'POLICY_SCHEMA');
  });

  it('an instructions pin: {instructions: true, digest}, once per server, nothing else in it', () => {
    const DIGEST = `sha256:${'c'.repeat(64)}`;
    const good = basePolicy();
    good.mcp![0]!.pins = [
      { instructions: true, digest: DIGEST },
      { tool: 'static', digest: DIGEST },
    ];
    expect(verify(policyText(good)).ok).toBe(true);
    for (const pins of [
      [
        { instructions: true, digest: DIGEST },
        { instructions: true, digest: DIGEST },
      ],
      [{ instructions: false, digest: DIGEST }],
      [{ instructions: 'docs', digest: DIGEST }],
      [{ instructions: true, tool: 'static', digest: DIGEST }],
      [{ instructions: true }],
    ]) {
      const bad = basePolicy();
      bad.mcp![0]!.pins = pins as never;
      expectCode(verify(policyText(bad)), 'POLICY_SCHEMA');
    }
  });

  it('a call-time cap that is not a whole number of seconds from 1 to 86400', () => {
    for (const bad of [0, -5, 1.5, 86401, '60']) {
      const policy = basePolicy();
      (policy.mcp![0] as unknown as Record<string, unknown>).max_call_seconds = bad;
      expectCode(verify(policyText(policy)), 'POLICY_SCHEMA');
    }
    const good = basePolicy();
    good.mcp![0]!.max_call_seconds = 900;
    expect(verify(policyText(good)).ok).toBe(true);
  });

  it('a first_sight that is not "pin" or "withhold", at the top or in an mcp[] entry', () => {
    // A value the gateway does not know must never read as "not withholding": the policy is refused.
    for (const bad of ['WITHHOLD', 'withhold ', 'ask', 'deny', '', true, false, 1, null, ['withhold'], {}]) {
      const top = basePolicy() as unknown as Record<string, unknown>;
      top.first_sight = bad;
      expectCode(verify(policyText(top as never)), 'POLICY_SCHEMA');
      const entry = basePolicy();
      (entry.mcp![0] as unknown as Record<string, unknown>).first_sight = bad;
      expectCode(verify(policyText(entry)), 'POLICY_SCHEMA');
    }
    const good = basePolicy({ first_sight: 'withhold' });
    good.mcp![0]!.first_sight = 'pin';
    expect(verify(policyText(good)).ok).toBe(true);
  });

  it('oauth.authorization_servers: honoured only as signed; an edited list fails verification', () => {
    const signed = basePolicy({ oauth: { authorization_servers: ['https://login.corp.test'] } });
    signed.mcp![0]!.oauth = { authorization_servers: ['https://login.corp.test/tenant1'] };
    const text = policyText(signed);
    const control = verify(text);
    expect(control.ok && control.policy.oauth).toEqual({
      authorization_servers: ['https://login.corp.test'],
    });
    // Someone adds their own authorization server to the list, at the top or per server.
    for (const edit of [
      (p: typeof signed) => p.oauth!.authorization_servers!.push('https://evil.example.test'),
      (p: typeof signed) => (p.mcp![0]!.oauth = { authorization_servers: ['https://evil.example.test'] }),
      (p: typeof signed) => delete p.oauth,
    ]) {
      const tampered = mutate(text, (env) => {
        const payload = JSON.parse(
          new TextDecoder().decode(decodeBase64Strict(env.payload)!),
        ) as typeof signed;
        edit(payload);
        env.payload = encodeBase64(new TextEncoder().encode(canonicalize(payload)));
      });
      expectCode(verify(tampered), 'POLICY_SIGNATURES_INSUFFICIENT');
    }
  });

  it('oauth.authorization_servers must be issuer URLs (https, or http on loopback), unique', () => {
    for (const bad of [
      'http://login.corp.test',
      'login.corp.test',
      'https://login.corp.test?x=1',
      'https://login.corp.test#f',
      'https://user@login.corp.test',
      '',
      7,
    ]) {
      expectCode(
        verify(policyText(basePolicy({ oauth: { authorization_servers: [bad as string] } }))),
        'POLICY_SCHEMA',
      );
      const entry = basePolicy();
      entry.mcp![0]!.oauth = { authorization_servers: [bad as string] };
      expectCode(verify(policyText(entry)), 'POLICY_SCHEMA');
    }
    expectCode(
      verify(
        policyText(basePolicy({ oauth: { authorization_servers: ['https://a.test', 'https://a.test'] } })),
      ),
      'POLICY_SCHEMA',
    );
    expectCode(verify(policyText(basePolicy({ oauth: { issuers: [] } as never }))), 'POLICY_SCHEMA');
    for (const good of [
      'https://login.corp.test',
      'https://login.corp.test/tenant1',
      'http://127.0.0.1:8080',
      'http://localhost:3000/x',
    ])
      expect(verify(policyText(basePolicy({ oauth: { authorization_servers: [good] } }))).ok).toBe(true);
  });

  it('a wrong _type', () => {
    expectCode(verify(policyText({ ...basePolicy(), _type: 'ringfence/root' })), 'POLICY_WRONG_TYPE');
  });

  it('a payload that is not canonical JSON', () => {
    expectCode(
      verify(JSON.stringify(signBytes(JSON.stringify(basePolicy(), null, 2), [testKey(2)]))),
      'POLICY_NOT_CANONICAL',
    );
  });

  it('a payload that is not JSON or not UTF-8', () => {
    expectCode(verify(JSON.stringify(signBytes('not json', [testKey(2)]))), 'POLICY_MALFORMED');
    expectCode(
      verify(JSON.stringify(signBytes(new Uint8Array([0xff, 0xfe]), [testKey(2)]))),
      'POLICY_MALFORMED',
    );
  });

  it('invalid dates and contradictions the schema alone cannot see', () => {
    expectCode(verify(policyText(basePolicy({ expires: '2026-02-30T00:00:00Z' }))), 'POLICY_SCHEMA');
    expectCode(verify(policyText(basePolicy({ expires: '2026-12-31' }))), 'POLICY_SCHEMA');
    expectCode(verify(policyText(basePolicy({ issued_at: '2027-01-01T00:00:00Z' }))), 'POLICY_SCHEMA');
    const twice = basePolicy();
    twice.mcp!.push({ server: 'github' });
    expectCode(verify(policyText(twice)), 'POLICY_SCHEMA');
  });

  it('signatures from a root of another organisation', () => {
    const other = buildRoot({
      version: 1,
      expires: '2027-01-01T00:00:00Z',
      rootKeys: [testKey(20).publicKey],
      rootThreshold: 1,
      policyKeys: [testKey(21).publicKey],
      policyThreshold: 1,
    });
    const otherRoot = verifyRootChain([JSON.stringify(signRoot(other, [testKey(20)]))], { now: NOW });
    if (!otherRoot.ok) throw new Error(otherRoot.message);
    expectCode(
      verifyPolicy(policyText(), { root: otherRoot.root, now: NOW }),
      'POLICY_SIGNATURES_INSUFFICIENT',
    );
  });

  it('never throws, whatever the input', () => {
    for (const input of [
      '',
      'null',
      '{',
      '[]',
      '{"payloadType":1}',
      '\u0000',
      'x'.repeat(10000),
      '['.repeat(5000),
    ]) {
      expect(() => verify(input)).not.toThrow();
      expect(verify(input).ok).toBe(false);
    }
  });
});

describe('tamper suite: every single-character change', () => {
  it('property: any one character of the envelope changed is refused, and nothing throws', async () => {
    const { forAll, int, pick } = await import('../testing/property.js');
    const original = policyText();
    const alphabet = 'AZaz09+/={}[]":,. \\';
    forAll(
      300,
      (r) => ({ at: int(r, 0, original.length - 1), ch: pick(r, [...alphabet]) }),
      ({ at, ch }) => {
        if (original[at] === ch) return;
        const changed = original.slice(0, at) + ch + original.slice(at + 1);
        let result: ReturnType<typeof verifyPolicy> | undefined;
        expect(() => {
          result = verifyPolicy(changed, { root, now: NOW });
        }).not.toThrow();
        expect(result?.ok).toBe(false);
      },
    );
  }, 60_000);
});
