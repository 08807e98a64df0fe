// The token holder wired into a real remote upstream (HttpClientTransport → RemoteUpstream) on
// loopback: the token goes with each request to its own origin only, is refreshed once after a
// 401, a refused refresh or an insufficient_scope ends the call with the login-needed words, a new
// login is picked up while running, and no redirect or other origin ever receives it.

import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HttpClientTransport } from '../upstream/http-transport.js';
import { RemoteUpstream } from '../upstream/remote.js';
import { type ProtectedMcp, protectedMcp } from './__fixtures__/protected-mcp.js';
import { type TokenEvent, TokenHolder } from './holder.js';
import { isLoginNeeded } from './login-needed.js';
import { type OAuthEntry, OAuthTokenStore, tokenDigest } from './store.js';

let home: string;
let store: OAuthTokenStore;
let mcp: ProtectedMcp;
let events: TokenEvent[];
const closers: (() => Promise<unknown>)[] = [];

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-upstream-auth-'));
  store = new OAuthTokenStore(home);
  mcp = await protectedMcp();
  events = [];
  closers.push(() => mcp.close());
});
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => {});
  await rm(home, { recursive: true, force: true });
});

/** A loopback token endpoint answering each refresh with `answer()`; counts them. */
async function tokenEndpoint(answer: () => { status: number; body: unknown }) {
  const asked: URLSearchParams[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      asked.push(new URLSearchParams(body));
      const { status, body: out } = answer();
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(out));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    server.close();
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/token`, asked };
}

const login = (tokenUrl: string, access: string, refresh?: string, scope = 'read'): OAuthEntry => ({
  resource: mcp.url,
  resource_origin: mcp.origin,
  authorization_server: {
    // On the token endpoint's origin: the only place it may be unless the policy lists the issuer.
    issuer: new URL(tokenUrl).origin,
    authorization_endpoint: `${new URL(tokenUrl).origin}/authorize`,
    token_endpoint: tokenUrl,
  },
  client: { client_id: 'ringfence-test', via: 'dynamic' },
  tokens: {
    access_token: access,
    token_type: 'Bearer',
    ...(refresh ? { refresh_token: refresh } : {}),
    expires_at: Date.now() + 3_600_000,
    obtained_at: Date.now(),
    scope,
  },
});

function upstream(url = mcp.url): RemoteUpstream {
  const holder = new TokenHolder({ name: 'files', url }, { store, onEvent: (e) => events.push(e) });
  const made = new RemoteUpstream({ name: 'files', transport: 'http', url }, undefined, undefined, holder);
  closers.push(() => made.close());
  return made;
}

const failure = (promise: Promise<unknown>) =>
  promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );

describe('a remote upstream behind OAuth', () => {
  it('sends the held token with every request and records its first use by digest', async () => {
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    const remote = upstream();
    await remote.start();
    expect(((await remote.callTool('read', {})) as { content: { text: string }[] }).content[0]!.text).toBe(
      'read done',
    );
    expect(mcp.seen.length).toBeGreaterThan(1);
    expect(mcp.seen.every((header) => header === 'Bearer AT-secret-1')).toBe(true);
    expect(events).toEqual([{ event: 'used', token: tokenDigest('AT-secret-1') }]);
  });

  it('with no login, start fails with the login-needed words and sends no token', async () => {
    const error = await failure(upstream().start());
    expect(isLoginNeeded(error)).toBe(true);
    expect(error.message).toBe(
      'files needs an OAuth login and none was made yet. Log in (a browser opens) with: ringfence mcp auth login files',
    );
    expect(mcp.seen).toEqual([]);
  });

  it('a 401 refreshes once and retries: the call succeeds with the new token', async () => {
    const as = await tokenEndpoint(() => ({
      status: 200,
      body: { access_token: 'AT-secret-2', token_type: 'Bearer', expires_in: 600 },
    }));
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login(as.url, 'AT-secret-1', 'RT-secret-1'));
    const remote = upstream();
    await remote.start();
    // The server revokes the old token and accepts only the refreshed one.
    mcp.tokens.delete('AT-secret-1');
    mcp.tokens.set('AT-secret-2', ['read']);
    await remote.callTool('read', {});
    expect(as.asked).toHaveLength(1);
    expect(as.asked[0]!.get('resource')).toBe(mcp.url);
    expect(mcp.posts.slice(-2)).toEqual(['Bearer AT-secret-1', 'Bearer AT-secret-2']);
    expect(events.map((e) => e.event)).toEqual(['used', 'refused', 'refreshed', 'used']);
    expect((await store.get('files'))!.tokens!.access_token).toBe('AT-secret-2');
  });

  it('a revoked login whose refresh is refused ends the call with the command, without a third try', async () => {
    const as = await tokenEndpoint(() => ({ status: 400, body: { error: 'invalid_grant' } }));
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login(as.url, 'AT-secret-1', 'RT-secret-1'));
    const remote = upstream();
    await remote.start();
    mcp.tokens.clear();
    const before = mcp.posts.length;
    const error = await failure(remote.callTool('read', {}));
    expect(isLoginNeeded(error)).toBe(true);
    expect(error.message).toMatch(
      /no longer accepted.*revoked or has expired\. Log in again with: ringfence mcp auth login files$/,
    );
    // One refused request; nothing else carries the dead token (not even the SDK's cancellation).
    expect(mcp.posts.slice(before)).toEqual(['Bearer AT-secret-1']);
    expect(as.asked).toHaveLength(1);
    // A new login while the upstream runs is used at the next call, without a restart.
    mcp.tokens.set('AT-secret-3', ['read']);
    await store.put('files', login(as.url, 'AT-secret-3', 'RT-secret-3'));
    await remote.callTool('read', {});
    expect(mcp.seen.at(-1)).toBe('Bearer AT-secret-3');
  });

  it('a 403 insufficient_scope asks for a step-up naming the scope, and records it', async () => {
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    const remote = upstream();
    await remote.start();
    const error = await failure(remote.callTool('write', {}));
    expect(isLoginNeeded(error)).toBe(true);
    expect(error.message).toContain("ringfence mcp auth login files --scope 'read write'");
    expect((await store.get('files'))!.pending_scope).toBe('read write');
    // The other tools keep working meanwhile.
    await remote.callTool('read', {});
  });

  it('a redirect to another origin is not followed: the other origin never receives the token', async () => {
    const other = await protectedMcp();
    closers.push(() => other.close());
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    mcp.override = (_req, res) => {
      res.writeHead(307, { location: other.url });
      res.end();
    };
    const error = await failure(upstream().start());
    expect(error.message).toMatch(/redirects are not followed/);
    expect(other.seen).toEqual([]);
  });

  it('a transport pointed at another origin than the registration sends no token there', async () => {
    const other = await protectedMcp();
    closers.push(() => other.close());
    other.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    const holder = new TokenHolder({ name: 'files', url: mcp.url }, { store });
    const transport = new HttpClientTransport(new URL(other.url), {
      maxAnswerBytes: 1 << 20,
      authorizer: holder,
    });
    closers.push(() => transport.close());
    await transport.start();
    const error = await failure(transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }));
    expect(error.message).toMatch(/401/);
    expect(other.seen).toEqual([undefined]);
  });

  it('a registration moved to another origin than the login recorded gets no token', async () => {
    const other = await protectedMcp();
    closers.push(() => other.close());
    other.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    const error = await failure(upstream(other.url).start());
    expect(isLoginNeeded(error)).toBe(true);
    expect(error.message).toContain(`made for ${mcp.origin}`);
    expect(other.seen).toEqual([]);
  });

  it('neither a per-request nor a configured Authorization goes beside the held token', async () => {
    mcp.tokens.set('AT-secret-1', ['read']);
    await store.put('files', login('https://as.test/token', 'AT-secret-1'));
    const holder = new TokenHolder({ name: 'files', url: mcp.url }, { store });
    const transport = new HttpClientTransport(new URL(mcp.url), {
      maxAnswerBytes: 1 << 20,
      headers: { Authorization: 'Bearer configured-secret' },
      authorizer: holder,
    });
    closers.push(() => transport.close());
    await transport.start();
    await transport.send(
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
      { headers: { authorization: 'Bearer client-secret', 'mcp-param-x': 'v' } },
    );
    expect(mcp.posts).toEqual(['Bearer AT-secret-1']);
  });
});
