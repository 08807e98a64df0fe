import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type OAuthEntry, OAuthTokenStore, tokenDigest } from './store.js';

const entry = (token = 'at-1'): OAuthEntry => ({
  resource: 'https://mcp.example.test/mcp',
  resource_origin: 'https://mcp.example.test',
  authorization_server: {
    issuer: 'https://auth.example.test',
    authorization_endpoint: 'https://auth.example.test/authorize',
    token_endpoint: 'https://auth.example.test/token',
  },
  client: { client_id: 'c1', via: 'dynamic', redirect_uri: 'http://127.0.0.1/callback' },
  tokens: {
    access_token: token,
    token_type: 'Bearer',
    refresh_token: 'rt-1',
    expires_at: 2e12,
    obtained_at: 1e12,
  },
});

describe('OAuthTokenStore', () => {
  let home: string;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-oauth-'));
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));

  it('keeps each registration apart, 0600, and forgets on request', async () => {
    const store = new OAuthTokenStore(home);
    await store.put('a', entry('at-a'));
    await store.put('b', entry('at-b'));
    expect((await store.get('a'))?.tokens?.access_token).toBe('at-a');
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
    expect(await store.forget('a')).toBe(true);
    expect(await store.get('a')).toBeUndefined();
    expect(await store.forget('a')).toBe(false);
    expect((await store.get('b'))?.tokens?.access_token).toBe('at-b');
  });

  it('refuses a record of the wrong shape, and a damaged file fails closed', async () => {
    const store = new OAuthTokenStore(home);
    await expect(store.put('a', { ...entry(), tokens: { access_token: '' } } as never)).rejects.toThrow(
      /access_token/,
    );
    await writeFile(store.path, '{"version":1,"servers":{"a":{"resource":"x"}}}', { mode: 0o600 });
    await expect(store.get('a')).rejects.toMatchObject({ code: 'STORE_CORRUPT' });
    expect(await readFile(store.path, 'utf8')).toContain('"resource":"x"');
  });

  it('updates under the lock with the current record', async () => {
    const store = new OAuthTokenStore(home);
    await store.put('a', entry('old'));
    const seen = await store.update('a', (current) => ({
      entry: current && { ...current, tokens: { ...current.tokens!, access_token: 'new' } },
      result: current?.tokens?.access_token,
    }));
    expect(seen).toBe('old');
    expect((await store.get('a'))?.tokens?.access_token).toBe('new');
  });

  it('names a token by a digest that does not contain it', () => {
    const digest = tokenDigest('secret-token-value');
    expect(digest).toMatch(/^sha256:[0-9a-f]{16}$/);
    expect(digest).not.toContain('secret');
  });
});
