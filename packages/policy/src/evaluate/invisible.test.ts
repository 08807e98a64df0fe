// refuse_invisible_arguments and a rule's refuse_invisible: schema, signing, verification and
// evaluation of a policy that uses them. The gateway decides what "invisible" means and refuses.
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
refuse_invisible_arguments: true
rules:
  - id: chat-emoji
    match: { server: chat, tool: send }
    action: allow
    refuse_invisible: false
    reason: messages may carry emoji sequences
  - id: strict-ask
    match: { server: files }
    action: ask
    refuse_invisible: true
  - id: plain
    match: { server: docs }
    action: allow
`;

const root = trustedRoot();

function signedAndVerified(source: string) {
  const policy = readPolicySource(source, 'policy.yaml');
  const verified = verifyPolicy(policyText(policy), { root, now: NOW });
  if (!verified.ok) throw new Error(`${verified.code}: ${verified.message}`);
  return verified;
}

describe('refusing invisible characters in arguments', () => {
  it('a policy using both settings is read, signed, verified and evaluated', () => {
    const { policy } = signedAndVerified(SOURCE);
    expect(policy.refuse_invisible_arguments).toBe(true);
    const call = (server: string, tool = 't') => decideCall(policy, { server, tool, arguments: {} });
    // No rule: the policy-wide setting.
    expect(call('other')).toMatchObject({ action: 'allow', rule: null, refuseInvisible: 'policy' });
    // A rule that says nothing inherits it.
    expect(call('docs')).toMatchObject({ rule: 'plain', refuseInvisible: 'policy' });
    // A rule that lets them through wins over the policy.
    expect(call('chat', 'send')).toEqual({
      action: 'allow',
      rule: 'chat-emoji',
      reason: 'messages may carry emoji sequences',
    });
    expect(call('files')).toMatchObject({ action: 'ask', rule: 'strict-ask', refuseInvisible: 'rule' });
  });

  it('without the policy-wide setting only a rule that asks for it refuses', () => {
    const { policy } = signedAndVerified(SOURCE.replace('refuse_invisible_arguments: true\n', ''));
    expect(decideCall(policy, { server: 'other', tool: 't' })).not.toHaveProperty('refuseInvisible');
    expect(decideCall(policy, { server: 'docs', tool: 't' })).not.toHaveProperty('refuseInvisible');
    expect(decideCall(policy, { server: 'files', tool: 't' }).refuseInvisible).toBe('rule');
    expect(
      decideCall(
        signedAndVerified(
          SOURCE.replace('refuse_invisible_arguments: true', 'refuse_invisible_arguments: false'),
        ).policy,
        { server: 'other', tool: 't' },
      ),
    ).not.toHaveProperty('refuseInvisible');
  });

  it('the schema stays strict: booleans only, and no look-alike names', () => {
    type Loose = Record<string, unknown> & { rules: Record<string, unknown>[] };
    const changes: [string, (p: Loose) => void, string, string][] = [
      [
        'a string',
        (p) => (p.refuse_invisible_arguments = 'yes'),
        'refuse_invisible_arguments: true',
        'refuse_invisible_arguments: "yes"',
      ],
      [
        'a misspelling',
        (p) => {
          delete p.refuse_invisible_arguments;
          p.refuse_invisible_args = true;
        },
        'refuse_invisible_arguments: true',
        'refuse_invisible_args: true',
      ],
      [
        'a number in a rule',
        (p) => (p.rules[1]!.refuse_invisible = 1),
        'refuse_invisible: true',
        'refuse_invisible: 1',
      ],
      [
        'a misspelling in a rule',
        (p) => {
          delete p.rules[1]!.refuse_invisible;
          p.rules[1]!.refuse_invisibles = true;
        },
        'refuse_invisible: true',
        'refuse_invisibles: true',
      ],
    ];
    for (const [what, change, from, to] of changes) {
      const policy = readPolicySource(SOURCE, 'policy.yaml') as unknown as Loose;
      change(policy);
      expect(validatePolicy(policy).ok, what).toBe(false);
      const verified = verifyPolicy(policyText(policy), { root, now: NOW });
      expect(verified.ok ? 'ok' : verified.code, what).toBe('POLICY_SCHEMA');
      expect(() => readPolicySource(SOURCE.replace(from, to), 'policy.yaml'), what).toThrow();
    }
  });

  it('turning the setting off after signing breaks the signature', () => {
    const text = policyText(readPolicySource(SOURCE, 'policy.yaml'));
    const envelope = JSON.parse(text) as Envelope;
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"refuse_invisible_arguments":true', '"refuse_invisible_arguments":false');
    envelope.payload = Buffer.from(payload).toString('base64');
    const verified = verifyPolicy(JSON.stringify(envelope), { root, now: NOW });
    expect(verified.ok ? 'ok' : verified.code).toBe('POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('policy show says what it does', () => {
    const lines = summarizePolicy(signedAndVerified(SOURCE), NOW);
    expect(lines).toContain(
      'Arguments with invisible characters: refused (refuse_invisible_arguments), unless the deciding rule lets them through',
    );
    expect(lines.join('\n')).toContain(
      '1. chat-emoji: allow when server=chat and tool=send, letting arguments with invisible characters through',
    );
    expect(lines.join('\n')).toContain(
      '2. strict-ask: ask when server=files, refusing arguments with invisible characters',
    );
  });
});
