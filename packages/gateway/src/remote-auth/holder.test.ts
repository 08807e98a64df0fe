import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type TokenEvent, TokenHolder } from './holder.js';
import { isLoginNeeded } from './login-needed.js';
import { type OAuthEntry, OAuthTokenStore, tokenDigest } from './store.js';

const MCP = 'http://127.0.0.1:7001/mcp';

interface TokenRequest {
  readonly form: URLSearchParams;
  readonly authorization: string | undefined;
}

/** A token endpoint on loopback whose answer each test decides. */
async function tokenEndpoint(
  answer: (request: TokenRequest, res: ServerResponse) => void,
): Promise<{ url: string; requests: TokenRequest[]; server: Server }> {
  const requests: TokenRequest[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    let body = '';
    req.on('data', (chunk) => {
      body += chunk;
    });
    req.on('end', () => {
      const request = { form: new URLSearchParams(body), authorization: req.headers.authorization };
      requests.push(request);
      answer(request, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/token`, requests, server };
}

const json = (res: ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
};

const entryFor = (
  tokenUrl: string,
  tokens: Partial<OAuthEntry['tokens']> = {},
  extra: Partial<OAuthEntry> = {},
): OAuthEntry => ({
  resource: MCP,
  resource_origin: 'http://127.0.0.1:7001',
  // The token endpoint on the issuer's own origin (the only place it may be unless the policy lists the issuer).
  authorization_server: {
    issuer: new URL(tokenUrl).origin,
    authorization_endpoint: `${new URL(tokenUrl).origin}/authorize`,
    token_endpoint: tokenUrl,
  },
  client: { client_id: 'client-1', via: 'dynamic' },
  tokens: {
    access_token: 'AT-secret-old',
    token_type: 'Bearer',
    refresh_token: 'RT-secret-1',
    expires_at: Date.now() + 3_600_000,
    obtained_at: Date.now(),
    scope: 'read',
    ...tokens,
  },
  ...extra,
});

describe('TokenHolder', () => {
  let home: string;
  let store: OAuthTokenStore;
  let servers: Server[];
  let events: TokenEvent[];
  const holder = (
    options: {
      issuerAllowed?: (issuer: string) => string | undefined;
      issuerListed?: (issuer: string) => boolean;
    } = {},
  ) => new TokenHolder({ name: 'files', url: MCP }, { store, onEvent: (e) => events.push(e), ...options });

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-holder-'));
    store = new OAuthTokenStore(home);
    servers = [];
    events = [];
  });
  afterEach(async () => {
    for (const server of servers) server.close();
    await rm(home, { recursive: true, force: true });
  });

  const endpoint = async (answer: Parameters<typeof tokenEndpoint>[0]) => {
    const made = await tokenEndpoint(answer);
    servers.push(made.server);
    return made;
  };

  it('sends the token to its own origin only, and says a login is missing', async () => {
    const h = holder();
    await expect(h.authorization(new URL(MCP))).rejects.toSatisfy(
      (e: Error) => isLoginNeeded(e) && e.message.includes('ringfence mcp auth login files'),
    );
    await store.put('files', entryFor('https://as.test/token'));
    // The store changed: picked up without a new holder.
    expect(await h.authorization(new URL(MCP))).toBe('Bearer AT-secret-old');
    expect(await h.authorization(new URL('http://127.0.0.1:7001/other/path'))).toBe('Bearer AT-secret-old');
    for (const elsewhere of [
      'http://127.0.0.1:7009/mcp',
      'https://127.0.0.1:7001/mcp',
      'http://localhost:7001/mcp',
    ])
      expect(await h.authorization(new URL(elsewhere))).toBeUndefined();
    expect(events).toEqual([{ event: 'used', token: tokenDigest('AT-secret-old') }]);
  });

  it('refuses a login made for another origin than the one registered now', async () => {
    await store.put(
      'files',
      entryFor('https://as.test/token', {}, { resource_origin: 'http://127.0.0.1:7999' }),
    );
    const error = await holder()
      .authorization(new URL(MCP))
      .catch((e: Error) => e);
    expect(isLoginNeeded(error)).toBe(true);
    expect((error as Error).message).toMatch(/made for http:\/\/127\.0\.0\.1:7999.*mcp auth login files/);
  });

  it('refreshes ahead of expiry with the resource and the public client id', async () => {
    const as = await endpoint((_, res) =>
      json(res, 200, {
        access_token: 'AT-secret-new',
        token_type: 'bearer',
        expires_in: 3600,
        refresh_token: 'RT-secret-2',
      }),
    );
    const now = Date.now();
    await store.put('files', entryFor(as.url, { obtained_at: now - 3_570_000, expires_at: now + 30_000 }));
    expect(await holder().authorization(new URL(MCP))).toBe('Bearer AT-secret-new');
    expect(as.requests).toHaveLength(1);
    const form = as.requests[0]!.form;
    expect(Object.fromEntries(form)).toEqual({
      grant_type: 'refresh_token',
      refresh_token: 'RT-secret-1',
      resource: MCP,
      client_id: 'client-1',
    });
    const stored = (await store.get('files'))!.tokens!;
    expect(stored).toMatchObject({
      access_token: 'AT-secret-new',
      refresh_token: 'RT-secret-2',
      scope: 'read',
    });
    expect(events[0]).toEqual({
      event: 'refreshed',
      token: tokenDigest('AT-secret-new'),
      previous: tokenDigest('AT-secret-old'),
    });
  });

  it('authenticates a confidential client as registered (basic, post)', async () => {
    const as = await endpoint((_, res) => json(res, 200, { access_token: 'AT-2', token_type: 'Bearer' }));
    const due = { expires_at: Date.now() - 1 };
    await store.put('files', {
      ...entryFor(as.url, due),
      client: { client_id: 'c:1', client_secret: 'S-secret', via: 'pre-registered' },
    });
    await holder().authorization(new URL(MCP));
    expect(as.requests[0]!.authorization).toBe(`Basic ${Buffer.from('c%3A1:S-secret').toString('base64')}`);
    expect(as.requests[0]!.form.get('client_secret')).toBeNull();
    await store.put('files', {
      ...entryFor(as.url, due),
      client: {
        client_id: 'c1',
        client_secret: 'S-secret',
        via: 'pre-registered',
        token_endpoint_auth_method: 'client_secret_post',
      },
    });
    await holder().authorization(new URL(MCP));
    expect(as.requests[1]!.authorization).toBeUndefined();
    expect(as.requests[1]!.form.get('client_secret')).toBe('S-secret');
  });

  it('a refused refresh (invalid_grant) of an expired token means a new login, asked once', async () => {
    const as = await endpoint((_, res) => json(res, 400, { error: 'invalid_grant' }));
    await store.put('files', entryFor(as.url, { expires_at: Date.now() - 1 }));
    const h = holder();
    const error = await h.authorization(new URL(MCP)).catch((e: Error) => e);
    expect(isLoginNeeded(error)).toBe(true);
    expect((error as Error).message).toMatch(/no longer accepted.*revoked.*ringfence mcp auth login files/);
    await expect(h.authorization(new URL(MCP))).rejects.toSatisfy(isLoginNeeded);
    expect(as.requests).toHaveLength(1);
    expect(events).toContainEqual({
      event: 'refused',
      token: tokenDigest('AT-secret-old'),
      reason: 'refresh refused: invalid_grant',
    });
  });

  it('an expired token with no refresh token needs a login; an unreachable endpoint keeps a valid token', async () => {
    await store.put(
      'files',
      entryFor('http://127.0.0.1:1/token', { expires_at: Date.now() - 1, refresh_token: undefined }),
    );
    await expect(holder().authorization(new URL(MCP))).rejects.toThrow(/has expired and cannot be renewed/);
    const now = Date.now();
    await store.put(
      'files',
      entryFor('http://127.0.0.1:1/token', { obtained_at: now - 3_590_000, expires_at: now + 10_000 }),
    );
    expect(await holder().authorization(new URL(MCP))).toBe('Bearer AT-secret-old');
  });

  it.each([
    ['another token_type', { access_token: 'AT-x', token_type: 'DPoP' }, /token_type is "DPoP", not Bearer/],
    ['no access_token', { token_type: 'Bearer' }, /no access_token/],
    ['a negative lifetime', { access_token: 'AT-x', token_type: 'Bearer', expires_in: -5 }, /expires_in/],
  ])('refuses a refresh answer with %s and keeps the stored record', async (_, body, message) => {
    const as = await endpoint((__, res) => json(res, 200, body));
    await store.put('files', entryFor(as.url, { expires_at: Date.now() - 1 }));
    const error = await holder()
      .authorization(new URL(MCP))
      .catch((e: Error) => e);
    expect((error as { code?: string }).code).toBe('AUTH_REFUSED');
    expect((error as Error).message).toMatch(message);
    expect((await store.get('files'))!.tokens!.access_token).toBe('AT-secret-old');
  });

  it('refuses a plain-http token endpoint off loopback, and an issuer the policy refuses, before any request', async () => {
    await store.put('files', entryFor('http://as.example.test/token', { expires_at: Date.now() - 1 }));
    await expect(holder().authorization(new URL(MCP))).rejects.toThrow(/not https/);
    const as = await endpoint((_, res) => json(res, 200, { access_token: 'AT-x', token_type: 'Bearer' }));
    await store.put('files', entryFor(as.url, { expires_at: Date.now() - 1 }));
    const h = holder({
      issuerAllowed: (issuer) =>
        issuer === new URL(as.url).origin ? 'not on the organisation list' : undefined,
    });
    await expect(h.authorization(new URL(MCP))).rejects.toThrow(
      /not allowed \(not on the organisation list\)/,
    );
    expect(as.requests).toHaveLength(0);
  });

  it('two holders (two processes) racing to refresh spend the rotating refresh token once', async () => {
    let issued = 0;
    const as = await endpoint((request, res) => {
      // Rotation with reuse detection: the first use of RT-secret-1 wins, any other is refused.
      if (request.form.get('refresh_token') !== 'RT-secret-1' || issued > 0)
        return json(res, 400, { error: 'invalid_grant' });
      issued++;
      setTimeout(
        () =>
          json(res, 200, {
            access_token: 'AT-secret-new',
            token_type: 'Bearer',
            expires_in: 3600,
            refresh_token: 'RT-secret-2',
          }),
        50,
      );
    });
    await store.put('files', entryFor(as.url, { expires_at: Date.now() - 1 }));
    const a = new TokenHolder({ name: 'files', url: MCP }, { store: new OAuthTokenStore(home) });
    const b = new TokenHolder({ name: 'files', url: MCP }, { store: new OAuthTokenStore(home) });
    const got = await Promise.all([a, b, a, b].map((h) => h.authorization(new URL(MCP))));
    expect(got).toEqual(Array(4).fill('Bearer AT-secret-new'));
    expect(as.requests).toHaveLength(1);
  });

  it('a 401 refreshes once and retries; a second 401 needs a login', async () => {
    const as = await endpoint((_, res) =>
      json(res, 200, { access_token: 'AT-secret-new', token_type: 'Bearer' }),
    );
    await store.put('files', entryFor(as.url));
    const h = holder();
    const sent = await h.authorization(new URL(MCP));
    const header = 'Bearer error="invalid_token"';
    expect(await h.refused({ status: 401, wwwAuthenticate: header, sent, retried: false })).toBe(true);
    expect(await h.authorization(new URL(MCP))).toBe('Bearer AT-secret-new');
    await expect(
      h.refused({ status: 401, wwwAuthenticate: header, sent: 'Bearer AT-secret-new', retried: true }),
    ).rejects.toThrow(/no longer accepted \(the server answered invalid_token\)/);
    expect(events.filter((e) => e.event === 'refused')).toHaveLength(2);
  });

  it('a 403 insufficient_scope records the step-up scope and says which', async () => {
    await store.put('files', entryFor('https://as.test/token'));
    const h = holder();
    const sent = await h.authorization(new URL(MCP));
    const error = await h
      .refused({
        status: 403,
        wwwAuthenticate: 'Bearer error="insufficient_scope", scope="write read"',
        sent,
        retried: false,
      })
      .catch((e: Error) => e);
    expect(isLoginNeeded(error)).toBe(true);
    expect((error as Error).message).toContain("scope 'read write'");
    expect((error as Error).message).toContain("ringfence mcp auth login files --scope 'read write'");
    expect((await store.get('files'))!.pending_scope).toBe('read write');
    // A 403 for another reason is not OAuth's: the request fails as it would.
    expect(await h.refused({ status: 403, wwwAuthenticate: undefined, sent, retried: false })).toBe(false);
  });

  it('never puts a token or secret in a message or an event', async () => {
    const as = await endpoint((_, res) =>
      json(res, 400, { error: 'invalid_grant', error_description: 'RT-secret-1 AT-secret-old' }),
    );
    await store.put('files', {
      ...entryFor(as.url, { expires_at: Date.now() - 1 }),
      client: { client_id: 'c', client_secret: 'S-secret', via: 'dynamic' },
    });
    const error = await holder()
      .authorization(new URL(MCP))
      .catch((e: Error) => e);
    const said = `${(error as Error).message}${JSON.stringify(events)}`;
    for (const secret of ['AT-secret', 'RT-secret', 'S-secret']) expect(said).not.toContain(secret);
  });
});
