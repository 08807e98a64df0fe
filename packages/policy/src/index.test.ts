import { describe, expect, it } from 'vitest';
import * as api from './index.js';

// Other packages (gateway, cli) build on these names; removing one is a breaking change that
// should be made on purpose, not by accident.
describe('public API', () => {
  it('exports what the gateway and CLI rely on', () => {
    for (const name of [
      'RingfenceError',
      'isRingfenceError',
      'canonicalize',
      'canonicalBytes',
      'digestOf',
      'sha256Hex',
      'parseStrictJson',
      'writeFileAtomic',
      'withFileLock',
      'ensurePrivateDirectory',
      'loadInstalledPolicy',
      'installPolicy',
      'verifyPolicy',
      'verifyRootChain',
      'verifyPolicyFiles',
      'decideCall',
      'isImageAllowed',
      'allowedTools',
      'isToolAllowed',
      'orgPins',
      'isReadOnlyTool',
      'egressCeiling',
      'isEgressWithinCeiling',
      'VERIFY_CODES',
      'POLICY_SCHEMA',
    ]) {
      expect(api, name).toHaveProperty(name);
    }
  });

  it('digestOf is sha256: + hex of the canonical bytes', () => {
    expect(api.digestOf({ b: [1, 'x'], a: null })).toBe(`sha256:${api.sha256Hex('{"a":null,"b":[1,"x"]}')}`);
  });
});
