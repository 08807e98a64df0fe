import { canonicalBytes } from '../canonical/canonicalize.js';
import type { Ed25519KeyPair } from '../crypto/ed25519.js';
import { encodeBase64 } from '../envelope/base64.js';
import { type Envelope, ROOT_PAYLOAD_TYPE, signEnvelope } from '../envelope/envelope.js';
import { keyIdOf } from '../keys/keyid.js';
import type { RootPayload } from './root.js';

/** Inputs of {@link buildRoot}. */
export interface BuildRootInput {
  version: number;
  /** RFC 3339 date-time. */
  expires: string;
  rootKeys: Uint8Array[];
  rootThreshold: number;
  policyKeys: Uint8Array[];
  policyThreshold: number;
}

/** Assembles a root payload from raw public keys; keyids are computed, duplicates collapsed. */
export function buildRoot(input: BuildRootInput): RootPayload {
  const keys: RootPayload['keys'] = {};
  const ids = (list: Uint8Array[]) => {
    const out: string[] = [];
    for (const publicKey of list) {
      const keyid = keyIdOf(publicKey);
      keys[keyid] = { keytype: 'ed25519', public: encodeBase64(publicKey) };
      if (!out.includes(keyid)) out.push(keyid);
    }
    return out;
  };
  return {
    _type: 'ringfence/root',
    spec_version: 1,
    version: input.version,
    expires: input.expires,
    keys,
    roles: {
      root: { keyids: ids(input.rootKeys), threshold: input.rootThreshold },
      policy: { keyids: ids(input.policyKeys), threshold: input.policyThreshold },
    },
  };
}

/** Signs a root payload's canonical bytes into a DSSE envelope. */
export function signRoot(root: RootPayload, keys: Ed25519KeyPair[]): Envelope {
  return signEnvelope(ROOT_PAYLOAD_TYPE, canonicalBytes(root), keys);
}
