import { describe, expect, it } from 'vitest';
import { parseWwwAuthenticate } from './www-authenticate.js';

describe('parseWwwAuthenticate', () => {
  it('reads a Bearer challenge with quoted and token values', () => {
    expect(
      parseWwwAuthenticate(
        'Bearer realm="mcp", error="insufficient_scope", scope="files:read files:write", resource_metadata="https://a.test/.well-known/oauth-protected-resource"',
      ),
    ).toEqual({
      scheme: 'bearer',
      error: 'insufficient_scope',
      scope: 'files:read files:write',
      resource_metadata: 'https://a.test/.well-known/oauth-protected-resource',
    });
    expect(parseWwwAuthenticate('bearer error=invalid_token')).toEqual({
      scheme: 'bearer',
      error: 'invalid_token',
    });
  });

  it('picks the Bearer challenge among several, and unescapes quoted strings', () => {
    expect(
      parseWwwAuthenticate('Basic realm="x", Bearer ERROR="invalid_token", error_description="a \\"b\\""'),
    ).toEqual({ scheme: 'bearer', error: 'invalid_token', error_description: 'a "b"' });
    expect(parseWwwAuthenticate('Negotiate abc==, Bearer scope="s"')).toEqual({
      scheme: 'bearer',
      scope: 's',
    });
  });

  it('never throws on garbage: what was read before the fault, or no scheme', () => {
    expect(parseWwwAuthenticate('')).toEqual({ scheme: '' });
    expect(parseWwwAuthenticate('Bearer error="unterminated')).toEqual({ scheme: 'bearer' });
    expect(parseWwwAuthenticate('"""')).toEqual({ scheme: '' });
    expect(parseWwwAuthenticate('Bearer scope="a", scope="b"').scope).toBe('a');
    expect(parseWwwAuthenticate('Basic')).toEqual({ scheme: 'basic' });
  });
});
