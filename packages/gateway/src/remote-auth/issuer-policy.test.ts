import type { Policy } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import { issuerAllowed, issuerListed } from './issuer-policy.js';

const policy = (extra: Partial<Policy>): Policy =>
  ({
    _type: 'ringfence/policy',
    spec_version: 1,
    name: 'corp',
    version: 3,
    issued_at: '2026-01-01T00:00:00Z',
    expires: '2027-01-01T00:00:00Z',
    default_action: 'allow',
    ...extra,
  }) as Policy;

describe('issuerAllowed', () => {
  it('no policy or no list: any issuer; never "listed"', () => {
    expect(issuerAllowed(undefined, 'a', 'https://as.test')).toBeUndefined();
    expect(issuerAllowed(policy({}), 'a', 'https://as.test')).toBeUndefined();
    expect(issuerListed(policy({}), 'a', 'https://as.test')).toBe(false);
  });

  it('a top-level list, compared exactly, with the reason and who to ask', () => {
    const p = policy({ oauth: { authorization_servers: ['https://login.corp.test'] } });
    expect(issuerAllowed(p, 'a', 'https://login.corp.test')).toBeUndefined();
    expect(issuerListed(p, 'a', 'https://login.corp.test')).toBe(true);
    for (const other of ['https://login.corp.test/', 'https://LOGIN.corp.test', 'https://evil.test'])
      expect(issuerAllowed(p, 'a', other)).toMatch(
        /policy "corp" \(version 3\) does not list the authorization server .* for a \(it lists: https:\/\/login\.corp\.test\).*Ask whoever publishes/,
      );
  });

  it("an mcp[] entry's list overrides the top level for that server only; [] allows none", () => {
    const p = policy({
      oauth: { authorization_servers: ['https://login.corp.test'] },
      mcp: [
        { server: 'wiki', oauth: { authorization_servers: ['https://wiki-auth.test'] } },
        { server: 'none', oauth: { authorization_servers: [] } },
      ],
    });
    expect(issuerAllowed(p, 'wiki', 'https://wiki-auth.test')).toBeUndefined();
    expect(issuerAllowed(p, 'wiki', 'https://login.corp.test')).toBeDefined();
    expect(issuerAllowed(p, 'other', 'https://login.corp.test')).toBeUndefined();
    expect(issuerAllowed(p, 'none', 'https://login.corp.test')).toMatch(/allows no OAuth login/);
  });
});
