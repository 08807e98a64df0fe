// mcp[].allow_sampling and allow_elicitation: schema, signing, evaluation and `policy show`.
// The gateway combines them with the registration (both must allow); here only the policy's side.
import { describe, expect, it } from 'vitest';
import { readPolicySource } from '../authoring/source.js';
import { summarizePolicy } from '../authoring/summary.js';
import { verifyPolicy } from '../policy/verify.js';
import { basePolicy, NOW, policyText, trustedRoot } from '../testing/fixtures.js';
import { allowsServerRequest } from './evaluate.js';

const SOURCE = `_type: ringfence/policy
spec_version: 1
name: example-corp
version: 3
issued_at: 2026-05-01T00:00:00Z
expires: 2026-12-31T00:00:00Z
default_action: allow
mcp:
  - server: writer
    allow_sampling: true
  - server: forms
    allow_elicitation: true
  - server: quiet
    allow_sampling: false
`;

const root = trustedRoot();

function verified(source: string) {
  const result = verifyPolicy(policyText(readPolicySource(source, 'policy.yaml')), { root, now: NOW });
  if (!result.ok) throw new Error(`${result.code}: ${result.message}`);
  return result;
}

describe('sampling and elicitation in the policy', () => {
  it('allows only what a server entry says; absent means no, and an unlisted server may not', () => {
    const { policy } = verified(SOURCE);
    expect(allowsServerRequest(policy, 'writer', 'sampling')).toBe(true);
    expect(allowsServerRequest(policy, 'writer', 'elicitation')).toBe(false);
    expect(allowsServerRequest(policy, 'forms', 'elicitation')).toBe(true);
    expect(allowsServerRequest(policy, 'forms', 'sampling')).toBe(false);
    expect(allowsServerRequest(policy, 'quiet', 'sampling')).toBe(false);
    expect(allowsServerRequest(policy, 'unlisted', 'sampling')).toBe(false);
    expect(allowsServerRequest(policy, 'unlisted', 'elicitation')).toBe(false);
  });

  it('refuses a value that is not a boolean', () => {
    for (const bad of ['yes', 1, null, 'true']) {
      const policy = basePolicy({ mcp: [{ server: 'writer' }] });
      (policy.mcp![0] as unknown as Record<string, unknown>).allow_sampling = bad;
      const result = verifyPolicy(policyText(policy), { root, now: NOW });
      expect(result.ok ? 'ok' : result.code).toBe('POLICY_SCHEMA');
    }
  });

  it('turning sampling on after signing breaks the signature', () => {
    const envelope = JSON.parse(policyText(readPolicySource(SOURCE, 'policy.yaml'))) as {
      payload: string;
    };
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"allow_sampling":false', '"allow_sampling":true');
    envelope.payload = Buffer.from(payload).toString('base64');
    const result = verifyPolicy(JSON.stringify(envelope), { root, now: NOW });
    expect(result.ok ? 'ok' : result.code).toBe('POLICY_SIGNATURES_INSUFFICIENT');
  });

  it('policy show says which server may ask the model or the person, and that others may not', () => {
    const text = summarizePolicy(verified(SOURCE), NOW).join('\n');
    expect(text).toMatch(
      / {2}writer\n(?:.*\n)*? {4}may ask model {4}yes, if registered with --allow-sampling/,
    );
    expect(text).toMatch(
      / {2}forms\n(?:.*\n)*? {4}may ask person {3}yes, if registered with --allow-elicitation/,
    );
    expect(text).toMatch(/ {2}quiet\n(?:.*\n)*? {4}may ask model {4}no \(sampling refused\)/);
    expect(text).toContain('any other server: no sampling, no elicitation');
  });
});
