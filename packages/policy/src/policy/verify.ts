import { canonicalize, sha256Hex } from '../canonical/canonicalize.js';
import type { Ed25519KeyPair } from '../crypto/ed25519.js';
import {
  countSignatures,
  type Envelope,
  openEnvelope,
  POLICY_PAYLOAD_TYPE,
  signEnvelope,
} from '../envelope/envelope.js';
import { parseStrictJson } from '../json/strict.js';
import { roleKeys, type TrustedRoot } from '../root/root.js';
import { refuse, type VerifyResult } from '../verify/result.js';
import { parseDateTime } from './datetime.js';
import type { Policy } from './types.js';
import { validatePolicy } from './validate.js';

const DAY_MS = 86_400_000;

/** The highest version of a policy name seen on this machine, from policy-state.json. */
export interface SeenPolicyVersion {
  version: number;
  /** `sha256:<hex>` of the payload that carried that version. */
  digest: string;
}

/** Options for {@link verifyPolicy}. */
export interface VerifyPolicyOptions {
  /** A root verified with {@link verifyRootChain}. */
  root: TrustedRoot;
  /** One fixed instant for the whole verification, in epoch milliseconds. */
  now: number;
  /**
   * Looks up the highest version seen for a policy name (rollback protection). Omit for a
   * stateless check such as CI.
   */
  seen?: (name: string) => SeenPolicyVersion | undefined;
  /** Refuse a policy that expires within this many days (CI wants warning before users do). */
  minDaysValid?: number;
}

/** A verified policy and what it was verified with. */
export interface VerifiedPolicy {
  policy: Policy;
  /** `sha256:<hex>` of the signed payload bytes (equal to `digestOf(policy)`). */
  digest: string;
  /** Keyids of the policy role whose signatures counted. */
  signers: string[];
  /** Epoch milliseconds. */
  expiresAt: number;
  root: TrustedRoot;
}

/**
 * Verifies a signed policy in this order, stopping at the first failure:
 * envelope shape → payloadType → signatures and threshold of the root's policy role → only then
 * parse the payload (strict JSON) → canonical bytes → schema → `_type` → expiry against `now`
 * (and `minDaysValid`) → version against the highest seen (same version with other bytes is
 * refused too). Never throws.
 */
export function verifyPolicy(text: string, options: VerifyPolicyOptions): VerifyResult<VerifiedPolicy> {
  const opened = openEnvelope(text, POLICY_PAYLOAD_TYPE);
  if (!opened.ok) return opened;
  const role = options.root.payload.roles.policy;
  const count = countSignatures(opened, roleKeys(options.root.payload, 'policy'), role.threshold);
  if (!count.met) {
    return refuse(
      'POLICY_SIGNATURES_INSUFFICIENT',
      `The policy has ${count.signers.length} valid signature(s) from the policy keys of trust root version ${options.root.version}; ` +
        `it needs ${role.threshold}. Sign it with policy keys listed in the root (\`ringfence policy sign SOURCE --key KEY …\`).`,
    );
  }
  let value: unknown;
  let text8: string;
  try {
    text8 = new TextDecoder('utf-8', { fatal: true }).decode(opened.payloadBytes);
    value = parseStrictJson(text8);
  } catch (error) {
    return refuse('POLICY_MALFORMED', `The signed payload is not valid JSON: ${(error as Error).message}`);
  }
  let canonical: string;
  try {
    canonical = canonicalize(value);
  } catch (error) {
    return refuse(
      'POLICY_MALFORMED',
      `The signed payload cannot be canonicalised: ${(error as Error).message}`,
    );
  }
  if (canonical !== text8) {
    return refuse(
      'POLICY_NOT_CANONICAL',
      'The signed payload is not RFC 8785 canonical JSON; sign the source with `ringfence policy sign`, which canonicalises it.',
    );
  }
  const validated = validatePolicy(value);
  if (!validated.ok) return refuse(validated.code, validated.message);
  const policy = validated.policy;
  const expiresAt = parseDateTime(policy.expires)!;
  if (options.now >= expiresAt) {
    return refuse(
      'POLICY_EXPIRED',
      `Policy ${policy.name} version ${policy.version} expired at ${policy.expires}. Ask the administrators for a newer signed policy and install it (\`ringfence policy install\`).`,
    );
  }
  if (options.minDaysValid !== undefined && expiresAt - options.now < options.minDaysValid * DAY_MS) {
    const days = Math.floor((expiresAt - options.now) / DAY_MS);
    return refuse(
      'POLICY_EXPIRES_SOON',
      `Policy ${policy.name} version ${policy.version} expires at ${policy.expires}, in ${days} day(s), less than the ${options.minDaysValid} required. Raise expires, bump version and sign again.`,
    );
  }
  const digest = `sha256:${sha256Hex(opened.payloadBytes)}`;
  const seen = options.seen?.(policy.name);
  if (seen) {
    if (policy.version < seen.version) {
      return refuse(
        'POLICY_ROLLBACK',
        `Policy ${policy.name} version ${policy.version} is older than version ${seen.version}, already seen on this machine; install the current policy.`,
      );
    }
    if (policy.version === seen.version && digest !== seen.digest) {
      return refuse(
        'POLICY_VERSION_CONFLICT',
        `Policy ${policy.name} version ${policy.version} differs from the version ${seen.version} already seen here; a changed policy needs a higher version number.`,
      );
    }
  }
  return { ok: true, policy, digest, signers: count.signers, expiresAt, root: options.root };
}

/** Signs a policy's canonical bytes into a DSSE envelope with every key given. */
export function signPolicy(policy: unknown, keys: Ed25519KeyPair[]): Envelope {
  return signEnvelope(POLICY_PAYLOAD_TYPE, new TextEncoder().encode(canonicalize(policy)), keys);
}
