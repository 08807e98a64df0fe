import { describe, expect, it } from 'vitest';
import { MAX_HEADER_LENGTH, parseWwwAuthenticate } from './www-authenticate.js';

describe('parseWwwAuthenticate', () => {
  it('reads the Bearer challenge of RFC 6750 and RFC 9728', () => {
    expect(
      parseWwwAuthenticate(
        'Bearer resource_metadata="https://mcp.example.test/.well-known/oauth-protected-resource/mcp", scope="files:read files:write", error="insufficient_scope"',
      ),
    ).toEqual({
      scheme: 'Bearer',
      error: 'insufficient_scope',
      scope: 'files:read files:write',
      resource_metadata: 'https://mcp.example.test/.well-known/oauth-protected-resource/mcp',
    });
    expect(parseWwwAuthenticate('Bearer')).toEqual({ scheme: 'Bearer' });
    expect(parseWwwAuthenticate('bearer error=invalid_token')).toEqual({
      scheme: 'Bearer',
      error: 'invalid_token',
    });
  });

  it('finds Bearer among several challenges and reads only its own parameters', () => {
    expect(
      parseWwwAuthenticate('Basic realm="a, b", Bearer scope="x", realm="r" , Digest scope="other"'),
    ).toEqual({ scheme: 'Bearer', scope: 'x', realm: 'r' });
    expect(parseWwwAuthenticate('Basic realm="x"')).toBeUndefined();
    expect(parseWwwAuthenticate(undefined)).toBeUndefined();
    expect(parseWwwAuthenticate('')).toBeUndefined();
  });

  it('keeps commas and escaped quotes inside quoted strings as the value', () => {
    expect(parseWwwAuthenticate('Bearer error_description="a, b=\\"c\\"", scope="s"')).toEqual({
      scheme: 'Bearer',
      error_description: 'a, b="c"',
      scope: 's',
    });
  });

  it('drops a parameter given twice instead of choosing one (hostile duplicates)', () => {
    expect(
      parseWwwAuthenticate(
        'Bearer resource_metadata="https://good.test/m", resource_metadata="https://evil.test/m", scope="a"',
      ),
    ).toEqual({ scheme: 'Bearer', scope: 'a' });
    expect(parseWwwAuthenticate('Bearer scope=a, SCOPE=b, scope=c')).toEqual({ scheme: 'Bearer' });
  });

  it('refuses an open quote and a header beyond the bound, whole', () => {
    expect(parseWwwAuthenticate('Bearer scope="a, resource_metadata="https://evil.test"')).toBeUndefined();
    const huge = `Bearer scope="${'a'.repeat(MAX_HEADER_LENGTH)}"`;
    const started = performance.now();
    expect(parseWwwAuthenticate(huge)).toBeUndefined();
    expect(parseWwwAuthenticate(`Bearer ${', '.repeat(4000)}`)).toEqual({ scheme: 'Bearer' });
    expect(performance.now() - started).toBeLessThan(200);
  });

  it('leaves out malformed parameters and token68', () => {
    expect(parseWwwAuthenticate('Bearer abc==, scope="ok", bad name="x", =x')).toEqual({
      scheme: 'Bearer',
      scope: 'ok',
    });
  });
});
