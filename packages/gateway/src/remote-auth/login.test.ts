import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AuthServer,
  driveBrowser,
  type ResourceServer,
  startAuthServer,
  startResourceServer,
} from './__fixtures__/oidc.js';
import { login } from './login.js';
import { OAuthTokenStore } from './store.js';

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
});
