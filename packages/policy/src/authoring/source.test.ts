import { describe, expect, it } from 'vitest';
import { readPolicySource } from './source.js';

const yaml = (equals: string) => `_type: ringfence/policy
spec_version: 1
name: example-corp
version: 1
issued_at: 2026-11-29T00:00:00Z
expires: 2030-01-31T00:00:00Z
default_action: allow
rules:
  - id: r
    match: { server: s }
    when: [{ arg: /id, equals: ${equals} }]
    action: deny
`;

describe('readPolicySource', () => {
  it('refuses an integer JSON numbers cannot hold exactly, instead of signing it rounded', () => {
    expect(() => readPolicySource(yaml('9007199254740993'), 'policy.yaml')).toThrow(
      /beyond what JSON numbers hold exactly/,
    );
    expect(() =>
      readPolicySource(`{"_type":"ringfence/policy","x":9007199254740993}`, 'policy.json'),
    ).toThrow(/exactly|schema|unknown/);
  });

  it('accepts safe integers and the same value as a string', () => {
    expect(readPolicySource(yaml('9007199254740991'), 'policy.yaml').rules?.[0]?.id).toBe('r');
    expect(readPolicySource(yaml('"9007199254740993"'), 'policy.yaml').rules?.[0]?.id).toBe('r');
  });
});
