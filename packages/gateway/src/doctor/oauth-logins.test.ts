import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpServerConfig, ServerStore } from '../config/servers.js';
import { type OAuthEntry, OAuthTokenStore, tokenDigest } from '../remote-auth/store.js';
import { checkOAuthLogins } from './oauth-logins.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-oauth-doctor-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

const remote = (name: string, oauth = true): HttpServerConfig => ({
  name,
  transport: 'http',
  url: `https://${name}.example.test/mcp`,
  ...(oauth ? { oauth: {} } : {}),
});

const entry = (
  name: string,
  tokens?: Partial<NonNullable<OAuthEntry['tokens']>>,
  pending?: string,
): OAuthEntry => ({
  resource: `https://${name}.example.test/mcp`,
  resource_origin: `https://${name}.example.test`,
  authorization_server: {
    issuer: 'https://as.example.test',
    authorization_endpoint: 'https://as.example.test/authorize',
    token_endpoint: 'https://as.example.test/token',
  },
  client: { client_id: 'c', via: 'dynamic' },
  ...(tokens
    ? { tokens: { access_token: `AT-secret-${name}`, token_type: 'Bearer', obtained_at: 1, ...tokens } }
    : {}),
  ...(pending ? { pending_scope: pending } : {}),
});

describe('doctor: OAuth logins', () => {
  it('lists the registrations whose login is due, each with its command, and no token', async () => {
    const servers = new ServerStore(home);
    for (const name of ['fine', 'renewable', 'missing', 'expired', 'stepup']) await servers.add(remote(name));
    await servers.add(remote('plain', false));
    const store = new OAuthTokenStore(home);
    const future = Date.now() + 3_600_000;
    await store.put('fine', entry('fine', { expires_at: future }));
    await store.put('renewable', entry('renewable', { expires_at: 2, refresh_token: 'RT-secret' }));
    await store.put('expired', entry('expired', { expires_at: 2 }));
    await store.put('stepup', entry('stepup', { expires_at: future }, 'read write'));
    const check = await checkOAuthLogins({ env: { RINGFENCE_HOME: home } });
    expect(check.status).toBe('warn');
    expect(check.summary).toContain(`fine: logged in (token ${tokenDigest('AT-secret-fine')}, expires `);
    expect(check.summary).toContain('renewable: logged in');
    expect(check.summary).toContain('missing needs an OAuth login and none was made yet');
    expect(check.summary).toContain("expired's OAuth login has expired and cannot be renewed");
    expect(check.summary).toContain(
      "stepup needs a wider permission than the login granted (scope 'read write')",
    );
    expect(check.summary).not.toContain('plain');
    expect(check.summary).toContain('mode 0600');
    expect(check.fix).toBe(
      "ringfence mcp auth login missing; ringfence mcp auth login expired; ringfence mcp auth login stepup --scope 'read write'",
    );
    expect(`${check.summary}${check.fix}`).not.toMatch(/AT-secret|RT-secret/);
  });

  it('is ok with no OAuth registration', async () => {
    await new ServerStore(home).add(remote('plain', false));
    expect(await checkOAuthLogins({ env: { RINGFENCE_HOME: home } })).toMatchObject({
      status: 'ok',
      summary: 'no OAuth registrations',
    });
  });
});
