// egress_secrets (policy-wide and per rule) and secret_patterns: schema, signing, verification and
// evaluation of a policy that uses them. The gateway owns the detectors and does the refusing.
import { describe, expect, it } from 'vitest';
import { readPolicySource } from '../authoring/source.js';
import { summarizePolicy } from '../authoring/summary.js';
import type { Envelope } from '../envelope/envelope.js';
import { validatePolicy } from '../policy/validate.js';
import { verifyPolicy } from '../policy/verify.js';
import { NOW, policyText, trustedRoot } from '../testing/fixtures.js';
import { decideCall } from './evaluate.js';

const SOURCE = `_type: ringfence/policy
spec_version: 1
name: example-corp
version: 3
issued_at: 2026-05-01T00:00:00Z
expires: 2026-12-31T00:00:00Z
default_action: allow
egress_secrets: ask
secret_patterns:
  - { class: acme, pattern: 'acme_[A-Za-z0-9]{24}' }
rules:
  - id: vault
    match: { server: vault }
    action: allow
    egress_secrets: allow
  - id: strict
    match: { server: chat }
    action: allow
    egress_secrets: refuse
  - id: plain
    match: { server: docs }
    action: allow
`;

const root = trustedRoot();

function verified(source: string) {
  const result = verifyPolicy(policyText(readPolicySource(source, 'policy.yaml')), { root, now: NOW });
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result;
}

describe('egress_secrets', () => {
  it('is read, signed, verified and evaluated: the rule wins, then the policy, then refuse', () => {
    const { policy } = verified(SOURCE);
    const call = (server: string) => decideCall(policy, { server, tool: 't', arguments: {} });
    expect(call('vault').egressSecrets).toEqual({ action: 'allow', from: 'rule' });
    expect(call('chat').egressSecrets).toEqual({ action: 'refuse', from: 'rule' });
    expect(call('docs').egressSecrets).toEqual({ action: 'ask', from: 'policy' });
    expect(call('other').egressSecrets).toEqual({ action: 'ask', from: 'policy' });
    expect(policy.secret_patterns).toEqual([{ class: 'acme', pattern: 'acme_[A-Za-z0-9]{24}' }]);
    const bare = verified(SOURCE.replace('egress_secrets: ask\n', '')).policy;
    // Absent: the gateway refuses (its default), and says so from no setting.
    expect(decideCall(bare, { server: 'other', tool: 't' })).not.toHaveProperty('egressSecrets');
  });

  it('the schema stays strict: three words only, class names only as shown', () => {
    for (const [from, to] of [
      ['egress_secrets: ask', 'egress_secrets: warn'],
      ['egress_secrets: ask', 'egress_secret: ask'],
      ['    egress_secrets: allow', '    egress_secrets: true'],
      ['class: acme', 'class: "Acme Keys"'],
      ["pattern: 'acme_[A-Za-z0-9]{24}'", "pattern: ''"],
    ]) {
      const changed = SOURCE.replace(from!, to!);
      expect(changed, to).not.toBe(SOURCE);
      let policy: unknown;
      try {
        policy = readPolicySource(changed, 'policy.yaml');
      } catch {
        continue; // refused while reading: as good
      }
      expect(validatePolicy(policy).ok, to).toBe(false);
    }
  });

  it('a change after signing is not honoured (allowing secrets, or dropping a pattern)', () => {
    for (const [from, to] of [
      ['"egress_secrets":"ask"', '"egress_secrets":"allow"'],
      ['"egress_secrets":"refuse"', '"egress_secrets":"allow"'],
      ['"pattern":"acme_[A-Za-z0-9]{24}"', '"pattern":"x^"'],
    ]) {
      const envelope = JSON.parse(policyText(readPolicySource(SOURCE, 'policy.yaml'))) as Envelope;
      const payload = Buffer.from(envelope.payload, 'base64').toString('utf8');
      expect(payload, from).toContain(from);
      envelope.payload = Buffer.from(payload.replace(from!, to!)).toString('base64');
      const result = verifyPolicy(JSON.stringify(envelope), { root, now: NOW });
      expect(result.ok ? 'ok' : result.code, from).toBe('POLICY_SIGNATURES_INSUFFICIENT');
    }
  });

  it('policy show says what it does', () => {
    const text = summarizePolicy(verified(SOURCE), NOW).join('\n');
    expect(text).toContain('Secrets not bound for the server called: ask (egress_secrets)');
    expect(text).toContain("Secret patterns of the organisation's own: acme");
    expect(text).toContain('1. vault: allow when server=vault, secrets not bound for the server: allow');
  });
});
