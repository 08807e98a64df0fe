// The remote-auth test fixtures checked on their own, before ringfence is put in front of them:
// the real authorization server (oidc-provider) issues tokens only through a PKCE dance driven in
// Debian's chromium, its access tokens are JWTs for the named resource, refresh and revocation
// work, and the protected MCP server refuses a missing, wrong-audience, expired or revoked token
// and a call wanting the wider scope. If these fail, remote-oauth.test.ts cannot mean anything.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuthorizationServer,
  startAuthorizationServer,
} from '../fixtures/oauth/authorization-server.mjs';
import { CHROMIUM, loginInBrowser } from '../fixtures/oauth/browser-login.mjs';
import {
  NARROW_SCOPE,
  type ProtectedMcpServer,
  startProtectedMcpServer,
  WIDE_SCOPE,
} from '../fixtures/oauth/protected-mcp-server.mjs';

const INITIALIZE = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'fixture-test', version: '1' },
  },
};

function post(url: string, body: unknown, token?: string) {
  return fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      ...(token ? { Authorization: `Bearer ${token}` } : {}),
    },
    body: JSON.stringify(body),
  });
}

const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
const claimsOf = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[1]!, 'base64url').toString());

describe('remote-auth fixtures', () => {
  let as: AuthorizationServer;
  let notes: ProtectedMcpServer;
  let other: ProtectedMcpServer;
  let callback: Server;
  let redirectUri: string;
  const codes: URLSearchParams[] = [];
  let metadata: Record<string, string>;

  beforeAll(async () => {
    if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing. Run scripts/ensure-browser first.`);
    as = await startAuthorizationServer();
    notes = await startProtectedMcpServer({ issuer: as.issuer, grantActive: (gid) => as.grantActive(gid) });
    other = await startProtectedMcpServer({ issuer: as.issuer });
    as.addResource(notes.resource, [NARROW_SCOPE, WIDE_SCOPE]);
    as.addResource(other.resource, [NARROW_SCOPE]);
    callback = createServer((req, res) => {
      codes.push(new URL(req.url!, 'http://127.0.0.1').searchParams);
      res.end('done');
    });
    await new Promise<void>((resolve) => callback.listen(0, '127.0.0.1', resolve));
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
    metadata = (await as.metadata()) as Record<string, string>;
  });

  afterAll(async () => {
    callback?.closeAllConnections();
    callback?.close();
    await Promise.all([notes?.close(), other?.close(), as?.close()]);
  });

  /** Register a public client, log in through chromium with PKCE, exchange the code. */
  async function dance(resource: string, scope: string, verifierAtExchange?: string) {
    const registration = await fetch(metadata.registration_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({
        redirect_uris: [redirectUri],
        token_endpoint_auth_method: 'none',
        application_type: 'native',
        client_name: 'fixture test',
      }),
    });
    expect(registration.status).toBe(201);
    const client = (await registration.json()) as { client_id: string; grant_types: string[] };
    expect(client.grant_types).toContain('refresh_token');
    const verifier = randomBytes(32).toString('base64url');
    const state = randomBytes(16).toString('base64url');
    const authorize = new URL(metadata.authorization_endpoint!);
    authorize.search = form({
      response_type: 'code',
      client_id: client.client_id,
      redirect_uri: redirectUri,
      scope,
      state,
      resource,
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });
    const before = codes.length;
    const ended = await loginInBrowser(authorize.href);
    expect(ended.url.startsWith(redirectUri)).toBe(true);
    const answer = codes[before]!;
    expect(answer.get('state')).toBe(state);
    const token = await fetch(metadata.token_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body: form({
        grant_type: 'authorization_code',
        code: answer.get('code')!,
        redirect_uri: redirectUri,
        client_id: client.client_id,
        code_verifier: verifierAtExchange ?? verifier,
        resource,
      }),
    });
    return { client, status: token.status, body: (await token.json()) as Record<string, string> };
  }

  it('advertises what the login needs: PKCE S256, registration, revocation, OpenID discovery', () => {
    expect(metadata.issuer).toBe(as.issuer);
    expect(metadata.code_challenge_methods_supported).toEqual(['S256']);
    expect(metadata.registration_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/reg$/);
    expect(metadata.revocation_endpoint).toBeTruthy();
  });

  it('refuses an authorization request without PKCE', async () => {
    const authorize = new URL(metadata.authorization_endpoint!);
    const registration = await fetch(metadata.registration_endpoint!, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
    });
    const { client_id } = (await registration.json()) as { client_id: string };
    authorize.search = form({
      response_type: 'code',
      client_id,
      redirect_uri: redirectUri,
      scope: NARROW_SCOPE,
    });
    const answer = await fetch(authorize, { redirect: 'manual' });
    const location = new URL(answer.headers.get('location')!);
    expect(location.searchParams.get('error')).toBe('invalid_request');
    expect(location.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('issues a JWT for the named resource through a PKCE login in chromium; the server takes it', async () => {
    const { status, body } = await dance(notes.resource, NARROW_SCOPE);
    expect(status).toBe(200);
    const claims = claimsOf(body.access_token!);
    expect(claims).toMatchObject({ iss: as.issuer, aud: notes.resource, scope: NARROW_SCOPE, sub: 'tester' });
    expect(body.refresh_token).toBeTruthy();
    expect(as.issued).toEqual(expect.arrayContaining([body.access_token, body.refresh_token]));

    const ok = await post(notes.url, INITIALIZE, body.access_token);
    expect(ok.status).toBe(200);
    expect(notes.authorizations()).toContain(`Bearer ${body.access_token}`);

    const none = await post(notes.url, INITIALIZE);
    expect(none.status).toBe(401);
    expect(none.headers.get('www-authenticate')).toBe(
      `Bearer scope="${NARROW_SCOPE}", resource_metadata="${notes.origin}/.well-known/oauth-protected-resource/mcp"`,
    );
    const prm = await (await fetch(`${notes.origin}/.well-known/oauth-protected-resource/mcp`)).json();
    expect(prm).toMatchObject({ resource: notes.resource, authorization_servers: [as.issuer] });

    // The wider scope: 403 naming it.
    const sessionId = ok.headers.get('mcp-session-id')!;
    const write = await fetch(notes.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        Authorization: `Bearer ${body.access_token}`,
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'write_note' } }),
    });
    expect(write.status).toBe(403);
    expect(write.headers.get('www-authenticate')).toContain(
      `error="insufficient_scope", scope="${NARROW_SCOPE} ${WIDE_SCOPE}"`,
    );

    // Another resource of the same issuer refuses it: the audience is not its own.
    const elsewhere = await post(other.url, INITIALIZE, body.access_token);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get('www-authenticate')).toContain(
      `audience ${notes.resource} is not ${other.resource}`,
    );

    // A token whose signature does not hold.
    const [h, p] = body.access_token!.split('.');
    const forged = `${h}.${p}.${Buffer.from('forged').toString('base64url')}`;
    expect((await post(notes.url, INITIALIZE, forged)).headers.get('www-authenticate')).toContain(
      'bad signature',
    );
  });

  it('refuses the code with the wrong PKCE verifier', async () => {
    const { status, body } = await dance(notes.resource, NARROW_SCOPE, randomBytes(32).toString('base64url'));
    expect(status).toBe(400);
    expect(body.error).toBe('invalid_grant');
  });

  it('refreshes, expires short-lived tokens, and revocation ends the grant', async () => {
    as.setAccessTokenTtl(2);
    try {
      const { client, body } = await dance(notes.resource, `${NARROW_SCOPE} ${WIDE_SCOPE}`);
      expect(claimsOf(body.access_token!).scope).toBe(`${NARROW_SCOPE} ${WIDE_SCOPE}`);
      await new Promise((resolve) => setTimeout(resolve, 2500));
      const expired = await post(notes.url, INITIALIZE, body.access_token);
      expect(expired.status).toBe(401);
      expect(expired.headers.get('www-authenticate')).toContain('expired');

      const refresh = (refresh_token: string) =>
        fetch(metadata.token_endpoint!, {
          method: 'POST',
          headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
          body: form({ grant_type: 'refresh_token', refresh_token, client_id: client.client_id }),
        });
      const refreshed = (await (await refresh(body.refresh_token!)).json()) as Record<string, string>;
      expect(claimsOf(refreshed.access_token!).aud).toBe(notes.resource);
      expect((await post(notes.url, INITIALIZE, refreshed.access_token)).status).toBe(200);

      await as.revokeAll();
      const revoked = await post(notes.url, INITIALIZE, refreshed.access_token);
      expect(revoked.status).toBe(401);
      expect(revoked.headers.get('www-authenticate')).toContain('grant revoked');
      const again = await refresh(refreshed.refresh_token!);
      expect(((await again.json()) as { error: string }).error).toBe('invalid_grant');
    } finally {
      as.setAccessTokenTtl(3600);
    }
  });
});
