import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { canonicalResource, discover, resourceNamesServer } from './discovery.js';
import { MAX_RESPONSE_BYTES } from './safe-fetch.js';

/** A loopback server answering JSON (or a function) per path, recording what was asked. */
interface Fake {
  origin: string;
  asked: string[];
  routes: Record<string, unknown>;
}
const servers: Server[] = [];
async function fake(routes: (origin: string) => Record<string, unknown>): Promise<Fake> {
  const state: Fake = { origin: '', asked: [], routes: {} };
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    state.asked.push(path);
    const route = state.routes[path];
    if (route === undefined) return void res.writeHead(404).end();
    if (typeof route === 'function') return void (route as (r: typeof res) => void)(res);
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(route));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  state.routes = routes(state.origin);
  return state;
}
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const asMetadata = (issuer: string, extra: Record<string, unknown> = {}) => ({
  issuer,
  authorization_endpoint: `${issuer}/authorize`,
  token_endpoint: `${issuer}/token`,
  registration_endpoint: `${issuer}/register`,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  ...extra,
});

/** A resource server at /mcp and an AS at the root of another origin, each overridable. */
async function pair(
  options: {
    prm?: (rs: string, as: string) => unknown;
    as?: (issuer: string) => unknown;
    asPath?: string;
  } = {},
) {
  const as = await fake(() => ({}));
  const issuer = `${as.origin}${options.asPath ?? ''}`;
  const wellKnown = options.asPath
    ? `/.well-known/openid-configuration${options.asPath}`
    : '/.well-known/oauth-authorization-server';
  const oidc = options.asPath
    ? {
        jwks_uri: `${issuer}/jwks`,
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      }
    : {};
  as.routes[wellKnown] = options.as ? options.as(issuer) : asMetadata(issuer, oidc);
  const rs = await fake((origin) => ({
    '/.well-known/oauth-protected-resource': options.prm
      ? options.prm(origin, issuer)
      : { resource: `${origin}/mcp`, authorization_servers: [issuer] },
  }));
  return { as, rs, issuer, url: `${rs.origin}/mcp` };
}

const refusal = (code: string, message?: RegExp) =>
  expect.objectContaining({ code, ...(message ? { message: expect.stringMatching(message) } : {}) });

describe('discover', () => {
  it('tries the well-known URIs in the spec order and returns what it checked', async () => {
    const { as, rs, issuer, url } = await pair({ asPath: '/tenant1' });
    const found = await discover(url);
    expect(rs.asked).toEqual([
      '/.well-known/oauth-protected-resource/mcp',
      '/.well-known/oauth-protected-resource',
    ]);
    expect(as.asked).toEqual([
      '/.well-known/oauth-authorization-server/tenant1',
      '/.well-known/openid-configuration/tenant1',
    ]);
    expect(found).toMatchObject({
      resource: url,
      resource_origin: rs.origin,
      authorization_server: {
        issuer,
        token_endpoint: `${issuer}/token`,
        registration_endpoint: `${issuer}/register`,
      },
      iss_parameter_supported: false,
    });
  });

  it("uses the 401's resource_metadata URL, and refuses one on another origin", async () => {
    const { rs, url } = await pair();
    rs.routes['/meta/prm'] = rs.routes['/.well-known/oauth-protected-resource'];
    await discover(url, {
      wwwAuthenticate: `Bearer resource_metadata="${rs.origin}/meta/prm", scope="a b"`,
    }).then((found) => expect(found.challenge_scope).toBe('a b'));
    expect(rs.asked).toEqual(['/meta/prm']);
    const other = await fake(() => ({}));
    await expect(
      discover(url, { wwwAuthenticate: `Bearer resource_metadata="${other.origin}/prm"` }),
    ).rejects.toEqual(refusal('OAUTH_RESOURCE_MISMATCH', /another origin/));
    expect(other.asked).toEqual([]);
  });

  it('refuses protected-resource metadata whose resource names another server', async () => {
    for (const resource of [
      (_rs: string) => 'https://other.example.test/mcp',
      (rs: string) => `${rs}/mcp-other`,
      (rs: string) => `${rs}/mcp/deeper`,
    ]) {
      const { url } = await pair({
        prm: (rs, issuer) => ({ resource: resource(rs), authorization_servers: [issuer] }),
      });
      await expect(discover(url)).rejects.toEqual(refusal('OAUTH_RESOURCE_MISMATCH'));
    }
    const { url } = await pair({ prm: (_rs, issuer) => ({ authorization_servers: [issuer] }) });
    await expect(discover(url)).rejects.toEqual(
      refusal('OAUTH_NO_RESOURCE_METADATA', /fields the RFC requires/),
    );
  });

  it('refuses AS metadata whose issuer differs from the URL it was fetched for (even by a slash)', async () => {
    for (const make of [(i: string) => `${i}/`, () => 'https://honest.example.test']) {
      const { url } = await pair({ as: (issuer) => asMetadata(issuer, { issuer: make(issuer) }) });
      await expect(discover(url)).rejects.toEqual(refusal('OAUTH_ISSUER_MISMATCH', /RFC 8414/));
    }
  });

  it('refuses an AS without S256 (absent or plain only)', async () => {
    for (const methods of [undefined, ['plain']]) {
      const { url } = await pair({
        as: (issuer) => asMetadata(issuer, { code_challenge_methods_supported: methods }),
      });
      await expect(discover(url)).rejects.toEqual(refusal('OAUTH_NO_PKCE', /S256/));
    }
  });

  it('refuses plain http off loopback for the server, the issuer and every endpoint', async () => {
    await expect(discover('http://mcp.example.test/mcp')).rejects.toEqual(refusal('OAUTH_INSECURE_URL'));
    const offLoopback = await pair({
      prm: (rs) => ({ resource: `${rs}/mcp`, authorization_servers: ['http://as.example.test'] }),
    });
    await expect(discover(offLoopback.url)).rejects.toEqual(
      refusal('OAUTH_INSECURE_URL', /as\.example\.test/),
    );
    for (const key of [
      'token_endpoint',
      'authorization_endpoint',
      'revocation_endpoint',
      'registration_endpoint',
    ]) {
      const { url } = await pair({
        as: (issuer) => asMetadata(issuer, { [key]: 'http://evil.example.test/x' }),
      });
      await expect(discover(url)).rejects.toEqual(refusal('OAUTH_INSECURE_URL'));
    }
  });

  it('refuses token, registration and revocation endpoints off the issuer origin unless the policy lists it', async () => {
    for (const key of ['token_endpoint', 'registration_endpoint', 'revocation_endpoint']) {
      const { url } = await pair({
        as: (issuer) => asMetadata(issuer, { [key]: 'https://tokens.example.test/t' }),
      });
      await expect(discover(url)).rejects.toEqual(refusal('OAUTH_ENDPOINT_ORIGIN', /tokens\.example\.test/));
      const listed = await discover(url, { issuerListed: () => true });
      expect(listed.authorization_server[key as 'token_endpoint']).toBe('https://tokens.example.test/t');
    }
    const { url } = await pair({
      as: (issuer) => asMetadata(issuer, { authorization_endpoint: 'https://login.example.test/a' }),
    });
    expect((await discover(url)).authorization_server.authorization_endpoint).toBe(
      'https://login.example.test/a',
    );
  });

  it('chooses the first authorization server the policy allows, and says why when none is', async () => {
    const { url, issuer } = await pair({
      prm: (rs, issuer) => ({
        resource: `${rs}/mcp`,
        authorization_servers: ['https://not-listed.example.test', issuer],
      }),
    });
    const found = await discover(url, {
      issuerAllowed: (i) => (i === issuer ? undefined : `${i} is not listed.`),
    });
    expect(found.authorization_server.issuer).toBe(issuer);
    await expect(discover(url, { issuerAllowed: (i) => `${i} is not listed; ask IT.` })).rejects.toEqual(
      refusal('OAUTH_ISSUER_NOT_ALLOWED', /not-listed\.example\.test is not listed; ask IT/),
    );
  });

  it('does not follow a redirect to another origin, and bounds the body', async () => {
    const elsewhere = await fake((origin) => ({
      '/prm': { resource: 'x', authorization_servers: [origin] },
    }));
    const { url, rs } = await pair();
    const redirect = (res: import('node:http').ServerResponse) =>
      void res.writeHead(302, { location: `${elsewhere.origin}/prm` }).end();
    rs.routes['/.well-known/oauth-protected-resource/mcp'] = redirect;
    rs.routes['/.well-known/oauth-protected-resource'] = redirect;
    await expect(discover(url)).rejects.toEqual(
      refusal('OAUTH_BAD_RESPONSE', /redirected to another origin/),
    );
    expect(elsewhere.asked).toEqual([]);
    rs.routes['/.well-known/oauth-protected-resource'] = (res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(`{"resource":"${'x'.repeat(MAX_RESPONSE_BYTES)}"}`);
    };
    delete rs.routes['/.well-known/oauth-protected-resource/mcp'];
    await expect(discover(url)).rejects.toEqual(refusal('OAUTH_BAD_RESPONSE', /more than/));
  });

  it('times out a server that never answers', async () => {
    const { url, rs } = await pair();
    rs.routes['/.well-known/oauth-protected-resource/mcp'] = () => {};
    await expect(discover(url, { timeoutMs: 300 })).rejects.toEqual(
      refusal('OAUTH_BAD_RESPONSE', /did not answer within 300 ms/),
    );
  });
});

describe('resource names', () => {
  it('canonical form and the parent rule', () => {
    expect(canonicalResource('HTTPS://MCP.Example.test/#f')).toBe('https://mcp.example.test');
    expect(canonicalResource('https://mcp.example.test/mcp')).toBe('https://mcp.example.test/mcp');
    expect(resourceNamesServer('https://a.test', 'https://a.test/mcp')).toBe(true);
    expect(resourceNamesServer('https://a.test/mcp/', 'https://a.test/mcp')).toBe(true);
    expect(resourceNamesServer('https://a.test/m', 'https://a.test/mcp')).toBe(false);
    expect(resourceNamesServer('https://a.test:444/mcp', 'https://a.test/mcp')).toBe(false);
    expect(resourceNamesServer('http://a.test/mcp', 'https://a.test/mcp')).toBe(false);
    expect(resourceNamesServer('https://a.test/mcp?x=1', 'https://a.test/mcp')).toBe(false);
  });
});
