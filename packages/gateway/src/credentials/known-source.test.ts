import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { OAuthTokenStore } from '../remote-auth/store.js';
import { StoredCredentials } from './known-source.js';
import { CredentialStore } from './store.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-known-'));
});
afterEach(async () => rm(home, { recursive: true, force: true }));

describe('StoredCredentials (KnownCredentials for the scanner)', () => {
  it('lists the store and each OAuth registration: the access token bound to its own server only', async () => {
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'gh', class: 'github', bindTo: ['github'], value: 'ghp_known0123' });
    const oauth = new OAuthTokenStore(home);
    await oauth.put('docs', {
      resource: 'https://mcp.example.test/mcp',
      resource_origin: 'https://mcp.example.test',
      authorization_server: {
        issuer: 'https://auth.example.test',
        authorization_endpoint: 'https://auth.example.test/authorize',
        token_endpoint: 'https://auth.example.test/token',
      },
      client: { client_id: 'c1', client_secret: 'cs-1', via: 'pre-registered' },
      tokens: { access_token: 'at-1', token_type: 'Bearer', refresh_token: 'rt-1', obtained_at: 1e12 },
    });
    const all = await new StoredCredentials(store, oauth).all();
    expect(all).toEqual([
      { id: 'gh', class: 'github', value: 'ghp_known0123', boundTo: ['github'] },
      { id: 'oauth:docs:access', class: 'bearer', value: 'at-1', boundTo: ['docs'] },
      { id: 'oauth:docs:refresh', class: 'bearer', value: 'rt-1', boundTo: [] },
      { id: 'oauth:docs:client-secret', class: 'generic', value: 'cs-1', boundTo: [] },
    ]);
  });

  it('without OAuth registrations: the store alone', async () => {
    const store = new CredentialStore(home, 'file');
    expect(await new StoredCredentials(store).all()).toEqual([]);
  });
});
