import { describe, expect, it } from 'vitest';
import { parseAllowEntry } from '../contract/allow.js';
import { normalizeHostName } from '../contract/hostname.js';
import { hostMatches } from './allowlist.js';
import { parseConnectTarget, parseForwardTarget } from './target.js';

describe('host matching', () => {
  const allow = ['api.example.com', '*.example.org', 'svc.example.net:8443'];
  it.each([
    ['api.example.com', 443, true],
    ['API.Example.COM.', 80, true],
    ['api.example.com', 8080, false],
    ['xapi.example.com', 443, false],
    ['api.example.com.evil.test', 443, false],
    ['a.example.org', 443, true],
    ['a.b.example.org', 443, true],
    ['example.org', 443, false],
    ['badexample.org', 443, false],
    ['svc.example.net', 8443, true],
    ['svc.example.net', 443, false],
  ])('%s:%d -> %s', (host, port, expected) => {
    expect(hostMatches(allow, host, port)).toBe(expected);
  });

  it('refuses allow entries that are addresses or not names', () => {
    expect(() => parseAllowEntry('10.0.0.1')).toThrow(/IP addresses/);
    expect(() => parseAllowEntry('[::1]:443')).toThrow();
    expect(() => parseAllowEntry('*.')).toThrow();
    expect(parseAllowEntry('*.Example.COM:444')).toMatchObject({
      name: 'example.com',
      wildcard: true,
      port: 444,
    });
  });
});

describe('target parsing', () => {
  it('normalises names: lower case, one trailing dot, IDNA', () => {
    expect(normalizeHostName('Example.COM.')).toBe('example.com');
    expect(normalizeHostName('example.com..')).toBeNull();
    expect(normalizeHostName('bücher.example')).toBe('xn--bcher-kva.example');
    expect(normalizeHostName('a b.example')).toBeNull();
    expect(normalizeHostName('-bad.example')).toBeNull();
    expect(normalizeHostName('a%2e.example')).toBeNull();
  });

  it('full-width digits that IDNA turns into an address are still a literal', () => {
    expect(parseConnectTarget('\uff11\uff12\uff17.\uff10.\uff10.\uff11:443').kind).toBe('ip-literal');
  });

  it('reads absolute URIs and refuses the rest', () => {
    expect(parseForwardTarget('http://a.example:8080/p?q=1')).toMatchObject({
      target: { kind: 'name', host: 'a.example', port: 8080 },
      path: '/p?q=1',
    });
    expect(parseForwardTarget('http://a.example?x')?.path).toBe('/?x');
    expect(parseForwardTarget('/relative')).toBeNull();
    expect(parseForwardTarget('https://a.example/')).toBeNull();
    expect(parseConnectTarget('a.example').kind).toBe('malformed');
    expect(parseConnectTarget('user@a.example:443').kind).toBe('malformed');
  });
});
