import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { revokeTokens } from './revoke.js';
import type { OAuthEntry } from './store.js';

/** Logout's revocation endpoint: on the issuer's origin, or elsewhere only while the policy lists the issuer. */
describe('revokeTokens and the issuer origin', () => {
  let server: Server | undefined;
  const bodies: string[] = [];
  afterEach(() => {
    server?.close();
    bodies.length = 0;
  });

  const revocationEndpoint = async (): Promise<string> => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk) => {
        body += chunk;
      });
      req.on('end', () => {
        bodies.push(body);
        res.writeHead(200).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/revoke`;
  };

  const entry = (issuer: string, revocation_endpoint: string): OAuthEntry => ({
    resource: 'http://127.0.0.1:7001/mcp',
    resource_origin: 'http://127.0.0.1:7001',
    authorization_server: {
      issuer,
      authorization_endpoint: `${issuer}/a`,
      token_endpoint: `${issuer}/t`,
      revocation_endpoint,
    },
    client: { client_id: 'c', via: 'dynamic' },
    tokens: { access_token: 'AT-1', token_type: 'Bearer', refresh_token: 'RT-1', obtained_at: Date.now() },
  });

  it('sends no token to an off-origin revocation endpoint of an issuer the policy does not list', async () => {
    const url = await revocationEndpoint();
    for (const options of [{}, { issuerListed: () => false }]) {
      const outcome = await revokeTokens(entry('http://127.0.0.1:7002', url), options);
      expect(outcome.revoked).toEqual([]);
      expect(outcome.problem).toMatch(
        /not sent for revocation: its revocation endpoint .* is not on the origin/,
      );
      expect(outcome.problem).not.toMatch(/AT-1|RT-1/);
    }
    expect(bodies).toEqual([]);
  });

  it('revokes there while the policy lists the issuer, and on the issuer origin without a list', async () => {
    const url = await revocationEndpoint();
    const listed = await revokeTokens(entry('http://127.0.0.1:7002', url), {
      issuerListed: (issuer) => issuer === 'http://127.0.0.1:7002',
    });
    expect(listed.revoked).toEqual(['refresh_token', 'access_token']);
    const own = await revokeTokens(entry(new URL(url).origin, url));
    expect(own.revoked).toEqual(['refresh_token', 'access_token']);
    expect(bodies).toHaveLength(4);
  });
});
