// first_sight: what the gateway does with a server it has never pinned. Read from YAML, signed,
// verified and evaluated; a signed "withhold" cannot be turned into "pin" without breaking the
// signature, and a value that is not exactly "pin" or "withhold" refuses the whole policy.
import { describe, expect, it } from 'vitest';
import { readPolicySource } from '../authoring/source.js';
import { summarizePolicy } from '../authoring/summary.js';
import type { Envelope } from '../envelope/envelope.js';
import { verifyPolicy } from '../policy/verify.js';
import { NOW, policyText, trustedRoot } from '../testing/fixtures.js';
import { firstSight } from './evaluate.js';

const SOURCE = `_type: ringfence/policy
spec_version: 1
name: example-corp
version: 3
issued_at: 2026-05-01T00:00:00Z
expires: 2026-12-31T00:00:00Z
default_action: allow
first_sight: withhold
mcp:
  - server: memory
    first_sight: pin
  - server: github
`;

const root = trustedRoot();

function signedAndVerified(source: string) {
  const policy = readPolicySource(source, 'policy.yaml');
  const verified = verifyPolicy(policyText(policy), { root, now: NOW });
  if (!verified.ok) throw new Error(`${verified.code}: ${verified.message}`);
  return verified;
}

describe('first_sight', () => {
  it('is read, signed, verified and evaluated: the entry overrides the top level', () => {
    const { policy } = signedAndVerified(SOURCE);
    expect(firstSight(policy, 'github')).toBe('withhold');
    expect(firstSight(policy, 'unlisted')).toBe('withhold');
    expect(firstSight(policy, 'memory')).toBe('pin');
  });

  it('turning withhold into pin after signing breaks the signature', () => {
    const envelope = JSON.parse(policyText(readPolicySource(SOURCE, 'policy.yaml'))) as Envelope;
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"first_sight":"withhold"', '"first_sight":"pin"');
    expect(payload).toContain('"first_sight":"pin","issued_at"');
    envelope.payload = Buffer.from(payload).toString('base64');
    const verified = verifyPolicy(JSON.stringify(envelope), { root, now: NOW });
    expect(verified.ok ? 'ok' : verified.code).toBe('POLICY_SIGNATURES_INSUFFICIENT');
  });

  it.each(['Withhold', 'withold', 'yes', 'true', '""'])(
    'refuses the source with first_sight: %s before anyone signs it',
    (value) => {
      expect(() =>
        readPolicySource(SOURCE.replace('first_sight: withhold', `first_sight: ${value}`), 'p.yaml'),
      ).toThrow(/first_sight must be one of "pin", "withhold"/);
    },
  );

  it('policy show says what it does', () => {
    const lines = summarizePolicy(signedAndVerified(SOURCE), NOW);
    expect(lines).toContain(
      'New servers (first sight): withheld until a person approves them (first_sight: withhold)',
    );
    expect(lines).toContain(
      '    first sight      pin (trusted on first use, unless registered with --review-first)',
    );
    const plain = summarizePolicy(signedAndVerified(SOURCE.replace('first_sight: withhold\n', '')), NOW);
    expect(plain).toContain(
      'New servers (first sight): pinned on first use; a developer may withhold them (mcp add --review-first)',
    );
  });
});
