import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import type { Policy } from '@ringfence/policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { oauthAuthorizers } from './oauth-holders.js';

const MCP = 'http://127.0.0.1:9/mcp';
const config = { name: 'files', transport: 'http', url: MCP, oauth: {} } as const;
const policyListing = (issuers: string[], entry?: string[]) =>
  ({
    name: 'corp',
    version: 3,
    oauth: { authorization_servers: issuers },
    ...(entry ? { mcp: [{ server: 'files', oauth: { authorization_servers: entry } }] } : {}),
  }) as unknown as Policy;

describe('mcp serve: the token holders it builds', () => {
  let home: string;
  const appended: unknown[] = [];
  const audit = { append: async (entry: unknown) => void appended.push(entry) } as never;
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-holders-'));
    await new OAuthTokenStore(home).put('files', {
      resource: MCP,
      resource_origin: 'http://127.0.0.1:9',
      authorization_server: {
        issuer: 'http://127.0.0.1:8/issuer',
        authorization_endpoint: 'http://127.0.0.1:8/auth',
        token_endpoint: 'http://127.0.0.1:8/token',
      },
      client: { client_id: 'c', via: 'dynamic' },
      tokens: { access_token: 'AT-held-secret', token_type: 'Bearer', obtained_at: Date.now() },
    });
  });
  afterEach(async () => rm(home, { recursive: true, force: true }));

  it('sends the held token when no policy is installed, or the policy lists its issuer', async () => {
    expect(await oauthAuthorizers(home, audit)(config)?.authorization(new URL(MCP))).toBe(
      'Bearer AT-held-secret',
    );
    const listed = oauthAuthorizers(home, audit, policyListing(['http://127.0.0.1:8/issuer']));
    expect(await listed(config)?.authorization(new URL(MCP))).toBe('Bearer AT-held-secret');
  });

  it("refuses a token from an issuer the installed policy does not list (top level, and the server's entry overriding it)", async () => {
    const top = oauthAuthorizers(home, audit, policyListing(['https://login.corp.example']));
    await expect(top(config)?.authorization(new URL(MCP))).rejects.toThrow(
      /does not list the authorization server/,
    );
    const entry = oauthAuthorizers(home, audit, policyListing(['http://127.0.0.1:8/issuer'], []));
    await expect(entry(config)?.authorization(new URL(MCP))).rejects.toThrow(/allows no OAuth login/);
    expect(JSON.stringify(appended)).not.toContain('AT-held-secret');
  });

  it('a token endpoint off the issuer origin: the token goes only while the policy lists the issuer', async () => {
    const store = new OAuthTokenStore(home);
    const entry = (await store.get('files'))!;
    await store.put('files', {
      ...entry,
      authorization_server: { ...entry.authorization_server, token_endpoint: 'http://127.0.0.1:7/token' },
    });
    // No policy installed: no issuer is listed, so the off-origin endpoint is refused.
    await expect(oauthAuthorizers(home, audit)(config)?.authorization(new URL(MCP))).rejects.toThrow(
      /not on the origin of its authorization server .*ringfence mcp auth login files/,
    );
    const listed = oauthAuthorizers(home, audit, policyListing(['http://127.0.0.1:8/issuer']));
    expect(await listed(config)?.authorization(new URL(MCP))).toBe('Bearer AT-held-secret');
  });

  it('gives no holder to a registration without OAuth', () => {
    expect(oauthAuthorizers(home, audit)({ name: 'plain', transport: 'http', url: MCP })).toBeUndefined();
  });
});
