import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Policy } from '@ringfence/policy';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AuthServer,
  driveBrowser,
  type ResourceServer,
  startAuthServer,
  startResourceServer,
} from './__fixtures__/oidc.js';
import { issuerAllowed } from './issuer-policy.js';
import { login } from './login.js';
import { revokeTokens } from './revoke.js';
import { OAuthTokenStore } from './store.js';
import { requestToken } from './token-request.js';

/** Every byte the login printed, and every file beside the store, must be free of these. */
async function expectNoSecrets(home: string, printed: string[], secrets: (string | undefined)[]) {
  const texts = [printed.join('\n')];
  for (const file of await readdir(home))
    if (file !== 'oauth-tokens.json') texts.push(await readFile(join(home, file), 'utf8').catch(() => ''));
  for (const secret of secrets.filter((s): s is string => !!s))
    for (const text of texts)
      expect(text.includes(secret), `a secret leaked: ${secret.slice(0, 6)}…`).toBe(false);
}

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;

describe('login against a real oidc-provider on loopback', () => {
  let as: AuthServer;
  let rs: ResourceServer;
  let home: string;
  beforeAll(async () => {
    as = await startAuthServer();
    rs = await startResourceServer([as.issuer], { scopes_supported: ['files:read'] });
  });
  afterAll(async () => {
    await rs.close();
    await as.close();
  });
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-login-'));
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));

  it('from a 401: discovery, dynamic registration, PKCE login, a JWT for this resource, saved 0600', async () => {
    const store = new OAuthTokenStore(home);
    const printed: string[] = [];
    let opened = '';
    const result = await login(
      'files',
      { url: rs.url, oauth: {} },
      {
        store,
        print: (line) => printed.push(line),
        wwwAuthenticate: rs.challenge,
        openBrowser: async (url) => {
          opened = url;
          await driveBrowser(url);
        },
      },
    );
    const authUrl = new URL(opened);
    expect(authUrl.searchParams.get('code_challenge_method')).toBe('S256');
    expect(authUrl.searchParams.get('resource')).toBe(rs.url);
    expect(authUrl.searchParams.get('state')?.length).toBeGreaterThanOrEqual(32);
    expect(new URL(authUrl.searchParams.get('redirect_uri')!).hostname).toBe('127.0.0.1');
    expect(printed.join('\n')).toContain(opened);
    expect(result).toMatchObject({
      issuer: as.issuer,
      client_via: 'dynamic',
      scope: 'files:read',
      refresh_token: true,
    });
    const entry = (await store.get('files'))!;
    expect(entry.resource_origin).toBe(rs.origin);
    expect(entry.authorization_server.issuer).toBe(as.issuer);
    expect(jwtPayload(entry.tokens!.access_token)).toMatchObject({
      aud: rs.url,
      iss: as.issuer,
      scope: 'files:read',
    });
    expect(result.token_digest).not.toContain(entry.tokens!.access_token);
    await expectNoSecrets(home, printed, [entry.tokens!.access_token, entry.tokens!.refresh_token]);
  });

  /** A login whose browser step is played by `browse` (given the authorization URL). */
  const run = (
    store: OAuthTokenStore,
    printed: string[],
    browse: (url: string) => Promise<void>,
    extra: Partial<Parameters<typeof login>[2]> = {},
  ) =>
    login(
      'files',
      { url: rs.url, oauth: {} },
      { store, print: (line) => printed.push(line), openBrowser: browse, timeoutMs: 20_000, ...extra },
    );

  /** Takes the provider's redirect and delivers a changed copy of it to the login's listener. */
  const tampered = (change: (url: URL) => void) => async (authUrl: string) => {
    const redirect = new URL(await driveBrowser(authUrl, { deliver: false }));
    change(redirect);
    await fetch(redirect).then((r) => r.text());
  };

  it.each([
    ['a wrong state', (u: URL) => u.searchParams.set('state', 'forged'), 'OAUTH_STATE_MISMATCH'],
    ['a wrong path', (u: URL) => (u.pathname = '/elsewhere'), 'OAUTH_REDIRECT_MISMATCH'],
    [
      'another issuer (RFC 9207 mix-up)',
      (u: URL) => u.searchParams.set('iss', 'https://evil.example.test'),
      'OAUTH_ISSUER_MISMATCH',
    ],
    [
      'no iss though the AS says it sends one',
      (u: URL) => u.searchParams.delete('iss'),
      'OAUTH_ISSUER_MISMATCH',
    ],
    [
      'an error from the AS',
      (u: URL) => {
        u.searchParams.delete('code');
        u.searchParams.set('error', 'access_denied');
      },
      'OAUTH_AUTHORIZATION_ERROR',
    ],
  ])('refuses a callback with %s, stores nothing and prints no code', async (_what, change, code) => {
    const store = new OAuthTokenStore(home);
    const printed: string[] = [];
    let redirect = '';
    await expect(
      run(store, printed, async (authUrl) => {
        await tampered((u) => {
          redirect = u.searchParams.get('code') ?? '';
          change(u);
        })(authUrl);
      }),
    ).rejects.toMatchObject({ code });
    expect(await store.get('files')).toBeUndefined();
    expect(redirect.length).toBeGreaterThan(10);
    await expectNoSecrets(home, printed, [redirect]);
  });

  it('names a PKCE failure at the token endpoint (the real provider refuses a wrong verifier)', async () => {
    const store = new OAuthTokenStore(home);
    const printed: string[] = [];
    const sent: string[] = [];
    const error = await run(store, printed, (url) => driveBrowser(url).then(() => {}), {
      fetch: async (url, init) => {
        if (init?.body instanceof URLSearchParams && init.body.has('code_verifier')) {
          sent.push(init.body.get('code_verifier')!, init.body.get('code')!);
          init.body.set('code_verifier', 'x'.repeat(43));
        }
        return fetch(url, init);
      },
    }).then(
      () => new Error('the login succeeded') as Error & { code?: string },
      (e: unknown) => e as Error & { code: string },
    );
    expect(error).toMatchObject({
      code: 'OAUTH_TOKEN_ERROR',
      message: expect.stringMatching(/invalid_grant.*PKCE verifier/s),
    });
    expect(await store.get('files')).toBeUndefined();
    expect(sent).toHaveLength(2);
    await expectNoSecrets(home, [...printed, error.message], sent);
  });

  it('step-up: asks for the union of granted and needed scopes, says why, and clears pending_scope', async () => {
    const store = new OAuthTokenStore(home);
    const printed: string[] = [];
    const browse = (url: string) => driveBrowser(url).then(() => {});
    await run(store, printed, browse);
    await store.update('files', (entry) => ({
      entry: entry && { ...entry, pending_scope: 'files:write' },
      result: undefined,
    }));
    let asked = '';
    const result = await run(store, printed, (url) => {
      asked = new URL(url).searchParams.get('scope') ?? '';
      return browse(url);
    });
    expect(asked.split(' ').sort()).toEqual(['files:read', 'files:write']);
    expect(printed.join('\n')).toMatch(
      /Asking for more access: files:write \(the server said a call needs it\), besides what you granted before \(files:read\)/,
    );
    const entry = (await store.get('files'))!;
    expect(entry.pending_scope).toBeUndefined();
    expect(result.scope?.split(' ').sort()).toEqual(['files:read', 'files:write']);
    expect(String(jwtPayload(entry.tokens!.access_token).scope).split(' ').sort()).toEqual([
      'files:read',
      'files:write',
    ]);
    // --scope widens the same way
    const again = await run(store, printed, browse, { scope: 'files:write' });
    expect(again.scope?.split(' ').sort()).toEqual(['files:read', 'files:write']);
  });

  it("refuses an issuer the organisation's policy does not list, before any browser or registration", async () => {
    const store = new OAuthTokenStore(home);
    const policy = {
      name: 'corp',
      version: 2,
      oauth: { authorization_servers: ['https://login.corp.test'] },
    } as Policy;
    let opened = false;
    await expect(
      run(
        store,
        [],
        async () => {
          opened = true;
        },
        { issuerAllowed: (issuer) => issuerAllowed(policy, 'files', issuer) },
      ),
    ).rejects.toMatchObject({
      code: 'OAUTH_ISSUER_NOT_ALLOWED',
      message: expect.stringContaining(as.issuer),
    });
    expect(opened).toBe(false);
    expect(await store.get('files')).toBeUndefined();
  });

  it('logout revokes at the revocation endpoint: the refresh token no longer works', async () => {
    const store = new OAuthTokenStore(home);
    await run(store, [], (url) => driveBrowser(url).then(() => {}));
    const entry = (await store.get('files'))!;
    expect(entry.authorization_server.revocation_endpoint).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    // oidc-provider cannot revoke a JWT access token (RFC 7009 unsupported_token_type); the grant ends with the refresh token.
    expect(await revokeTokens(entry)).toEqual({
      revoked: ['refresh_token'],
      not_revocable: ['access_token'],
    });
    await expect(
      requestToken({
        token_endpoint: entry.authorization_server.token_endpoint,
        client: entry.client,
        params: { grant_type: 'refresh_token', refresh_token: entry.tokens!.refresh_token! },
        resource: entry.resource,
      }),
    ).rejects.toMatchObject({ code: 'OAUTH_TOKEN_ERROR', message: expect.stringContaining('invalid_grant') });
  });

  it('times out when the browser never comes back', async () => {
    const store = new OAuthTokenStore(home);
    await expect(run(store, [], async () => {}, { timeoutMs: 300 })).rejects.toMatchObject({
      code: 'OAUTH_TIMEOUT',
    });
  });

  it('prints the URL and goes on when there is no browser to open', async () => {
    const store = new OAuthTokenStore(home);
    const printed: string[] = [];
    const done = login(
      'files',
      { url: rs.url, oauth: {} },
      { store, print: (line) => printed.push(line), timeoutMs: 20_000 },
    );
    for (let i = 0; i < 100 && !printed.some((l) => l.includes('http')); i++)
      await new Promise((r) => setTimeout(r, 20));
    const url = /(http:\/\/\S+\/auth\S*)/.exec(printed.join('\n'))?.[1];
    expect(url).toBeDefined();
    await driveBrowser(url!);
    await expect(done).resolves.toMatchObject({ issuer: as.issuer });
  });
});

describe('a token for another audience', () => {
  it('is refused and not stored (the provider issues tokens for another resource)', async () => {
    const as = await startAuthServer({ audience: () => 'https://other.example.test/mcp' });
    const rs = await startResourceServer([as.issuer]);
    const home = await mkdtemp(join(tmpdir(), 'rf-login-'));
    try {
      const store = new OAuthTokenStore(home);
      const printed: string[] = [];
      await expect(
        login(
          'files',
          { url: rs.url, oauth: { scope: 'files:read' } },
          {
            store,
            print: (line) => printed.push(line),
            openBrowser: (url) => driveBrowser(url).then(() => {}),
          },
        ),
      ).rejects.toMatchObject({
        code: 'OAUTH_AUDIENCE',
        message: expect.stringContaining('other.example.test'),
      });
      expect(await store.get('files')).toBeUndefined();
    } finally {
      await rs.close();
      await as.close();
      await rm(home, { recursive: true, force: true });
    }
  });
});
