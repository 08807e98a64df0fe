import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loginStateOf, TokenHolder } from './holder.js';
import { loginCommand } from './login-needed.js';
import { type OAuthEntry, OAuthTokenStore } from './store.js';

/** Hostile servers against the token holder: a scope made of shell syntax, a token endpoint off the issuer's origin. */

const MCP = 'http://127.0.0.1:7001/mcp';
const ISSUER = 'http://127.0.0.1:7002';

const entry = (
  tokenEndpoint: string,
  tokens: Partial<NonNullable<OAuthEntry['tokens']>> = {},
): OAuthEntry => ({
  resource: MCP,
  resource_origin: 'http://127.0.0.1:7001',
  authorization_server: {
    issuer: ISSUER,
    authorization_endpoint: `${ISSUER}/a`,
    token_endpoint: tokenEndpoint,
  },
  client: { client_id: 'c', via: 'dynamic' },
  tokens: {
    access_token: 'AT-1',
    token_type: 'Bearer',
    refresh_token: 'RT-1',
    obtained_at: Date.now() - 7_200_000,
    expires_at: Date.now() - 1000,
    scope: 'read',
    ...tokens,
  },
});

describe('TokenHolder against hostile servers', () => {
  let home: string;
  let store: OAuthTokenStore;
  let server: Server | undefined;
  let bodies: string[];

  /** A token endpoint on loopback, on another origin (port) than ISSUER, that would renew anything. */
  const offOriginEndpoint = async (): Promise<string> => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ access_token: 'AT-2', token_type: 'Bearer', expires_in: 3600 }));
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/t`;
  };

  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-holder-hostile-'));
    store = new OAuthTokenStore(home);
    bodies = [];
    server = undefined;
  });
  afterEach(async () => {
    server?.close();
    await rm(home, { recursive: true, force: true });
  });

  it('a 403 scope made of shell syntax is neither stored nor put in the command', async () => {
    await store.put('files', entry(`${ISSUER}/t`, { expires_at: Date.now() + 3_600_000 }));
    const holder = new TokenHolder({ name: 'files', url: MCP }, { store });
    const error = await holder
      .refused({
        status: 403,
        wwwAuthenticate: 'Bearer error="insufficient_scope", scope="write $(touch /tmp/pwned) `id`;rm"',
        sent: 'Bearer AT-1',
        retried: false,
      })
      .catch((e: Error) => e);
    const message = (error as Error).message;
    expect(message).not.toMatch(/\$\(|`|;rm/);
    expect(message).toContain("ringfence mcp auth login files --scope 'read write'");
    expect(message).toContain('3 scopes that ringfence does not pass to a command');
    expect((await store.get('files'))!.pending_scope).toBe('read write');
  });

  it('a hostile pending_scope already in the file (older version, edited) is filtered where it is shown', async () => {
    const stored = { ...entry(`${ISSUER}/t`), pending_scope: 'read $(touch /tmp/pwned) `id`' };
    const reason = loginStateOf(stored, Date.now());
    expect(reason).toMatchObject({ kind: 'insufficient-scope', scope: 'read' });
    expect(loginCommand('files', reason)).toBe("ringfence mcp auth login files --scope 'read'");
  });

  it('refuses to refresh at a token endpoint off the issuer origin unless the policy lists the issuer', async () => {
    const tokenUrl = await offOriginEndpoint();
    await store.put('files', entry(tokenUrl));
    for (const options of [{}, { issuerAllowed: () => undefined }, { issuerListed: () => false }]) {
      const holder = new TokenHolder({ name: 'files', url: MCP }, { store, ...options });
      const error = await holder.authorization(new URL(MCP)).catch((e: Error) => e);
      expect((error as { code?: string }).code).toBe('AUTH_REFUSED');
      expect((error as Error).message).toMatch(
        /token endpoint http:\/\/127\.0\.0\.1:\d+ is not on the origin of its authorization server http:\/\/127\.0\.0\.1:7002.*ringfence mcp auth login files/,
      );
    }
    // Not even a still-valid access token is sent while its refresh would go off-origin.
    await store.put('files', entry(tokenUrl, { expires_at: Date.now() + 3_600_000 }));
    await expect(
      new TokenHolder({ name: 'files', url: MCP }, { store }).authorization(new URL(MCP)),
    ).rejects.toThrow(/not on the origin/);
    expect(bodies).toEqual([]);
  });

  it('refreshes there while the policy lists the issuer, and stops once it no longer does', async () => {
    const tokenUrl = await offOriginEndpoint();
    await store.put('files', entry(tokenUrl));
    let listed = true;
    const holder = new TokenHolder(
      { name: 'files', url: MCP },
      { store, issuerListed: (issuer) => listed && issuer === ISSUER },
    );
    expect(await holder.authorization(new URL(MCP))).toBe('Bearer AT-2');
    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toContain('refresh_token=RT-1');
    listed = false;
    await expect(holder.authorization(new URL(MCP))).rejects.toThrow(/not on the origin/);
    expect(bodies).toHaveLength(1);
  });
});
