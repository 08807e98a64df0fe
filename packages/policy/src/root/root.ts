import type { ValidateFunction } from 'ajv/dist/2020.js';
import { canonicalize, sha256Hex } from '../canonical/canonicalize.js';
import { checkPublicKey } from '../crypto/ed25519.js';
import { decodeBase64Strict } from '../envelope/base64.js';
import {
  countSignatures,
  type OpenedEnvelope,
  openEnvelope,
  ROOT_PAYLOAD_TYPE,
  type TrustedKey,
} from '../envelope/envelope.js';
import { parseStrictJson } from '../json/strict.js';
import { keyIdOf } from '../keys/keyid.js';
import { compileSchema, describeSchemaError } from '../policy/ajv.js';
import { parseDateTime } from '../policy/datetime.js';
import { refuse, type VerifyFailure, type VerifyResult } from '../verify/result.js';
import { ROOT_SCHEMA } from './schema.js';

/** A role of the trust root: which keys may sign, and how many must. */
export interface RootRole {
  keyids: string[];
  threshold: number;
}

/** A trust root payload (`root.json` is its signed envelope). */
export interface RootPayload {
  _type: 'ringfence/root';
  spec_version: 1;
  version: number;
  expires: string;
  keys: Record<string, { keytype: 'ed25519'; public: string }>;
  roles: { root: RootRole; policy: RootRole };
}

/** A root whose signatures were verified, ready to verify policies or the next root version. */
export interface TrustedRoot {
  payload: RootPayload;
  /** `sha256:<hex>` of the signed payload bytes. */
  digest: string;
  version: number;
  /** Epoch milliseconds. */
  expiresAt: number;
}

let validator: ValidateFunction<RootPayload> | undefined;

/** The keys of a role, decoded. Only called on roots that passed {@link checkRootPayload}. */
export function roleKeys(root: RootPayload, role: 'root' | 'policy'): TrustedKey[] {
  return root.roles[role].keyids.map((keyid) => ({
    keyid,
    publicKey: decodeBase64Strict(root.keys[keyid]!.public)!,
  }));
}

/**
 * Validates a parsed root payload: schema, then that every keyid is the SHA-256 of its key, every
 * key is a usable Ed25519 point (not small-order), roles name known keys, and thresholds can be
 * reached. Never throws.
 */
export function checkRootPayload(value: unknown): VerifyResult<{ root: RootPayload }> {
  validator ??= compileSchema<RootPayload>(ROOT_SCHEMA);
  if (!validator(value)) {
    if (validator.errors?.[0]?.instancePath === '/_type') {
      return refuse(
        'ROOT_WRONG_TYPE',
        'The payload _type is not "ringfence/root"; pass the trust root file with --root.',
      );
    }
    return refuse(
      'ROOT_MALFORMED',
      `The trust root ${describeSchemaError(validator.errors)}. Recreate it with \`ringfence policy root init\`.`,
    );
  }
  const root = value;
  for (const [keyid, entry] of Object.entries(root.keys)) {
    const publicKey = decodeBase64Strict(entry.public);
    if (publicKey?.length !== 32) {
      return refuse('ROOT_KEY_INVALID', `Key ${keyid} in the trust root is not 32 bytes of base64.`);
    }
    if (keyIdOf(publicKey) !== keyid) {
      return refuse(
        'ROOT_KEY_INVALID',
        `Key ${keyid} in the trust root does not match its keyid (SHA-256 of the key).`,
      );
    }
    const problem = checkPublicKey(publicKey);
    if (problem) {
      return refuse(
        'ROOT_KEY_INVALID',
        `Key ${keyid} in the trust root is unusable (${problem}); generate a new one with \`ringfence policy keygen\`.`,
      );
    }
  }
  for (const name of ['root', 'policy'] as const) {
    const role = root.roles[name];
    const unknown = role.keyids.find((id) => !(id in root.keys));
    if (unknown)
      return refuse(
        'ROOT_MALFORMED',
        `The ${name} role names key ${unknown}, which the trust root does not list.`,
      );
    if (role.threshold > role.keyids.length) {
      return refuse(
        'ROOT_MALFORMED',
        `The ${name} role needs ${role.threshold} signatures but lists only ${role.keyids.length} keys.`,
      );
    }
  }
  return { ok: true, root };
}

function parsePayload(opened: OpenedEnvelope): VerifyResult<{ root: RootPayload }> {
  let value: unknown;
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(opened.payloadBytes);
    value = parseStrictJson(text);
  } catch (error) {
    return refuse('ROOT_MALFORMED', `The trust root payload is not valid JSON: ${(error as Error).message}`);
  }
  // One root, one byte form: its digest can then be recomputed from the payload alone.
  let canonical: string | undefined;
  try {
    canonical = canonicalize(value);
  } catch {
    canonical = undefined;
  }
  if (canonical !== text) {
    return refuse(
      'ROOT_MALFORMED',
      'The trust root payload is not RFC 8785 canonical JSON; create it with `ringfence policy root init`.',
    );
  }
  return checkRootPayload(value);
}

function trusted(root: RootPayload, opened: OpenedEnvelope): TrustedRoot {
  return {
    payload: root,
    digest: `sha256:${sha256Hex(opened.payloadBytes)}`,
    version: root.version,
    expiresAt: parseDateTime(root.expires)!,
  };
}

/** Options for {@link verifyRootChain}. */
export interface VerifyRootOptions {
  /** One fixed instant for the whole verification, in epoch milliseconds. */
  now: number;
  /**
   * The root this machine already trusts (from policy-state.json). Without it, the first root
   * given is the anchor and must be signed by a threshold of its own root role.
   */
  trusted?: TrustedRoot;
}

/**
 * Verifies a sequence of root envelopes, oldest first, and returns the newest trusted root.
 *
 * Each version after the trusted one must be exactly the next version and be signed by a
 * threshold of the previous root role (checked before its payload is read) and of its own root
 * role. Re-presenting the trusted root is fine; an older one, another one with the same version,
 * a gap, or one signed only by new keys is refused. Only the newest root's expiry matters, as in
 * TUF: an old link in the chain may have expired since. `versions` gives the version each text
 * turned out to be. Never throws.
 */
export function verifyRootChain(
  texts: readonly string[],
  options: VerifyRootOptions,
): VerifyResult<{ root: TrustedRoot; versions: number[] }> {
  let current = options.trusted;
  const versions: number[] = [];
  for (const [index, text] of texts.entries()) {
    const step = verifyNextRoot(text, current, index);
    if (!step.ok) return step;
    current = step.root;
    versions.push(current.version);
  }
  if (!current) return refuse('ROOT_MISSING', 'No trust root was given; pass --root root.json.');
  if (options.now >= current.expiresAt) {
    return refuse(
      'ROOT_EXPIRED',
      `Trust root version ${current.version} expired at ${current.payload.expires}. An administrator must sign a new root version (\`ringfence policy root init --previous …\`).`,
    );
  }
  return { ok: true, root: current, versions };
}

/**
 * Drops the roots before the one already trusted (matched by payload digest, without parsing),
 * so a full history `v1 … vN` can be given to a machine that already trusts some `vK`.
 */
export function fromTrusted(texts: readonly string[], trusted: TrustedRoot | undefined): string[] {
  if (!trusted) return [...texts];
  for (let i = texts.length - 1; i >= 0; i--) {
    const opened = openEnvelope(texts[i]!, ROOT_PAYLOAD_TYPE);
    if (opened.ok && `sha256:${sha256Hex(opened.payloadBytes)}` === trusted.digest) return texts.slice(i);
  }
  return [...texts];
}

function verifyNextRoot(
  text: string,
  current: TrustedRoot | undefined,
  index: number,
): VerifyResult<{ root: TrustedRoot }> {
  const opened = openEnvelope(text, ROOT_PAYLOAD_TYPE);
  if (!opened.ok) return opened;
  if (!current) {
    const parsed = parsePayload(opened);
    if (!parsed.ok) return parsed;
    return ownThreshold(parsed.root, opened) ?? { ok: true, root: trusted(parsed.root, opened) };
  }
  if (`sha256:${sha256Hex(opened.payloadBytes)}` === current.digest) return { ok: true, root: current };
  const previousRole = current.payload.roles.root;
  const byPrevious = countSignatures(opened, roleKeys(current.payload, 'root'), previousRole.threshold);
  if (!byPrevious.met) {
    return refuse(
      'ROOT_ROTATION_UNSIGNED',
      `Root file ${index + 1} is not the trusted root version ${current.version} and is not signed by ${previousRole.threshold} of its root keys ` +
        `(${byPrevious.signers.length} valid). If it is an older root, use the current one; a new root must be version ${current.version + 1}, ` +
        'signed by the old root keys and the new ones (`ringfence policy root init --previous …`).',
    );
  }
  const parsed = parsePayload(opened);
  if (!parsed.ok) return parsed;
  const version = parsed.root.version;
  if (version < current.version) {
    return refuse(
      'ROOT_ROLLBACK',
      `Root version ${version} is older than trusted version ${current.version}; use the current root.json.`,
    );
  }
  if (version === current.version) {
    return refuse(
      'ROOT_VERSION_CONFLICT',
      `Root version ${version} has different contents from the trusted root of the same version; a changed root needs a new version number.`,
    );
  }
  if (version !== current.version + 1) {
    return refuse(
      'ROOT_VERSION_SKIPPED',
      `Root version ${version} skips version ${current.version + 1}; give every root version in order (--root v${current.version + 1} --root …).`,
    );
  }
  return ownThreshold(parsed.root, opened) ?? { ok: true, root: trusted(parsed.root, opened) };
}

function ownThreshold(root: RootPayload, opened: OpenedEnvelope): VerifyFailure | undefined {
  const count = countSignatures(opened, roleKeys(root, 'root'), root.roles.root.threshold);
  if (count.met) return undefined;
  return refuse(
    'ROOT_SIGNATURES_INSUFFICIENT',
    `Root version ${root.version} has ${count.signers.length} valid signature(s) from its own root keys; it needs ${root.roles.root.threshold}. ` +
      'Sign it with more root keys (`ringfence policy root init … --sign KEY`).',
  );
}
