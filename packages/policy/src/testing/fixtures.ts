// Test helpers: keys, roots and policies built in memory. Excluded from the build.
import { canonicalize } from '../canonical/canonicalize.js';
import { type Ed25519KeyPair, keyPairFromSeed } from '../crypto/ed25519.js';
import { encodeBase64 } from '../envelope/base64.js';
import { type Envelope, POLICY_PAYLOAD_TYPE, signEnvelope } from '../envelope/envelope.js';
import type { Policy } from '../policy/types.js';
import { buildRoot, signRoot } from '../root/create.js';
import type { RootPayload, TrustedRoot } from '../root/root.js';
import { verifyRootChain } from '../root/root.js';

/** A deterministic key pair: tests must be reproducible. */
export function testKey(n: number): Ed25519KeyPair {
  const seed = new Uint8Array(32);
  seed[0] = n;
  seed[31] = 0xa5;
  return keyPairFromSeed(seed);
}

export const NOW = Date.parse('2026-06-01T00:00:00Z');

export function rootPayload(
  overrides: Partial<RootPayload> & {
    rootKeys?: Ed25519KeyPair[];
    policyKeys?: Ed25519KeyPair[];
    rootThreshold?: number;
    policyThreshold?: number;
  } = {},
): RootPayload {
  const {
    rootKeys = [testKey(1)],
    policyKeys = [testKey(2)],
    rootThreshold = 1,
    policyThreshold = 1,
    ...rest
  } = overrides;
  return {
    ...buildRoot({
      version: 1,
      expires: '2027-01-01T00:00:00Z',
      rootKeys: rootKeys.map((k) => k.publicKey),
      rootThreshold,
      policyKeys: policyKeys.map((k) => k.publicKey),
      policyThreshold,
    }),
    ...rest,
  };
}

export function rootText(payload: RootPayload, signers: Ed25519KeyPair[]): string {
  return JSON.stringify(signRoot(payload, signers));
}

export function trustedRoot(payload = rootPayload(), signers = [testKey(1)]): TrustedRoot {
  const result = verifyRootChain([rootText(payload, signers)], { now: NOW });
  if (!result.ok) throw new Error(`fixture root failed: ${result.code} ${result.message}`);
  return result.root;
}

export function basePolicy(overrides: Partial<Policy> = {}): Policy {
  return {
    _type: 'ringfence/policy',
    spec_version: 1,
    name: 'example-corp',
    version: 7,
    issued_at: '2026-05-01T00:00:00Z',
    expires: '2026-12-31T00:00:00Z',
    default_egress: 'deny',
    allowed_mcp: ['node:22-alpine', `ghcr.io/example-corp/docs-mcp@sha256:${'a'.repeat(64)}`],
    mcp: [
      {
        server: 'github',
        allow_tools: ['list_issues', 'create_issue'],
        pins: [{ tool: 'list_issues', digest: `sha256:${'b'.repeat(64)}` }],
        egress_allow: ['api.github.com'],
        read_only_tools: ['list_issues'],
      },
    ],
    default_action: 'allow',
    rules: [
      {
        id: 'no-issues-on-prod',
        match: { server: 'github', tool: 'create_issue', scope: 'contractors' },
        when: [{ arg: '/repo', glob: 'example-corp/prod-*' }],
        action: 'deny',
        reason: 'contractors may not file issues on production repositories',
      },
    ],
    ...overrides,
  };
}

/** Signs arbitrary payload bytes (not necessarily canonical, not necessarily valid). */
export function signBytes(
  payload: string | Uint8Array,
  signers: Ed25519KeyPair[],
  type = POLICY_PAYLOAD_TYPE,
): Envelope {
  const bytes = typeof payload === 'string' ? new TextEncoder().encode(payload) : payload;
  return signEnvelope(type, bytes, signers);
}

export function policyText(policy: unknown = basePolicy(), signers = [testKey(2)]): string {
  return JSON.stringify(signBytes(canonicalize(policy), signers));
}

export { encodeBase64 };
