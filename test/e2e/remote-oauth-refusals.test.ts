// Issue 23's refusals end to end, each through the real `ringfence mcp auth login` against real
// servers on loopback: a protected-resource document naming another server's resource, an
// authorization server whose metadata names another issuer, one whose token endpoint is on
// another origin, a forged callback (wrong `state`, wrong `iss`), an access token for another
// audience, and plain http to another machine. Each refusal says why; no token, code or client
// registration reaches the hostile origin; nothing is stored; no secret is printed.
// An issuer the organisation's signed policy does not list: the login is refused before the
// browser, and a token held from before is not used.
// (PKCE failure, an authorization server without S256 and plain-http metadata off loopback are
// covered by the login's unit tests against the same provider: packages/gateway/src/remote-auth/.)
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startProtectedMcpServer } from '../fixtures/oauth/protected-mcp-server.mjs';
import { type RecordingOrigin, startRecordingOrigin } from '../fixtures/oauth/recording-origin.mjs';
import { connectStdio, freshHome } from '../helpers/mcp.js';
import {
  heldRecord,
  leaked,
  loginThroughBrowser,
  type OAuthWorld,
  readableFiles,
  requireChromium,
  rf,
  startOAuthWorld,
  transcript,
} from '../helpers/oauth.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll } from '../helpers/processes.js';

describe('remote-auth refusals end to end (issue 23)', () => {
  let home: string;
  let world: OAuthWorld;
  const hostile: { close(): Promise<void> }[] = [];
  const asHits = () =>
    world.as.requests.filter((r) => /^\/(auth|reg|token)/.test(r.path ?? '') && r.method === 'POST').length;

  beforeAll(async () => {
    requireChromium();
    home = await freshHome();
    // The organisation policy of this file's processes lives beside the home, never in /etc/ringfence.
    process.env.RINGFENCE_POLICY_DIR = join(home, '..', 'policy');
    world = await startOAuthWorld();
    const added = await rf(['mcp', 'add', 'notes', '--url', world.notes.url, '--oauth'], home);
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    delete process.env.RINGFENCE_POLICY_DIR;
    await stopAll();
    for (const server of hostile) await server.close();
    await world?.close();
  });

  /** Register `url` as NAME behind OAuth and try to log in; the login must stop before any URL. */
  async function refusedLogin(name: string, url: string) {
    const added = await rf(['mcp', 'add', name, '--url', url, '--oauth'], home);
    expect(added.code, added.stderr).toBe(0);
    const before = asHits();
    const done = await loginThroughBrowser(home, name, world.as.issuer);
    expect(done.code, done.stderr).not.toBe(0);
    expect(done.browser).toBeUndefined();
    expect(asHits()).toBe(before);
    expect((await heldRecord(home, name))?.tokens).toBeUndefined();
    return done;
  }

  async function hostileOrigin(): Promise<RecordingOrigin> {
    const origin = await startRecordingOrigin();
    hostile.push(origin);
    return origin;
  }

  it('a resource document that names another server’s resource: refused, that server gets no token', async () => {
    const evil = await startProtectedMcpServer({
      issuer: world.as.issuer,
      metadata: { resource: world.notes.resource },
    });
    hostile.push(evil);
    const done = await refusedLogin('evil-resource', evil.url);
    expect(done.stderr).toMatch(/resource/i);
    expect(evil.authorizations()).toEqual([]);
  });

  it('an authorization server whose metadata names another issuer: refused', async () => {
    const liar = await hostileOrigin();
    const real = await world.as.metadata();
    const lie = { ...real, issuer: world.as.issuer };
    liar.script({
      '/.well-known/oauth-authorization-server': { json: lie },
      '/.well-known/openid-configuration': { json: lie },
    });
    const mcp = await startProtectedMcpServer({
      issuer: world.as.issuer,
      metadata: { authorization_servers: [liar.origin] },
    });
    hostile.push(mcp);
    const done = await refusedLogin('evil-issuer', mcp.url);
    expect(done.stderr).toMatch(/issuer/i);
    expect(liar.requests.filter((r) => r.method === 'POST' || r.authorization)).toEqual([]);
  });

  it('metadata that sends the code and the registration to another origin: refused, that origin gets nothing', async () => {
    const liar = await hostileOrigin();
    const sink = await hostileOrigin();
    const metadata = {
      issuer: liar.origin,
      authorization_endpoint: `${liar.origin}/auth`,
      token_endpoint: `${sink.origin}/token`,
      registration_endpoint: `${sink.origin}/reg`,
      revocation_endpoint: `${sink.origin}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
    };
    liar.script({
      '/.well-known/oauth-authorization-server': { json: metadata },
      '/.well-known/openid-configuration': { json: metadata },
    });
    const mcp = await startProtectedMcpServer({
      issuer: world.as.issuer,
      metadata: { authorization_servers: [liar.origin] },
    });
    hostile.push(mcp);
    const done = await refusedLogin('evil-endpoints', mcp.url);
    expect(done.stderr).toMatch(/origin|endpoint/i);
    expect(sink.requests).toEqual([]);
  });

  describe('a forged callback on the loopback redirect', () => {
    for (const [what, forge, reason] of [
      ['a wrong state', (p: URLSearchParams) => `code=forged-code-0001&state=not-${p.get('state')}`, /state/],
      [
        'a wrong iss (mix-up)',
        (p: URLSearchParams) =>
          `code=forged-code-0002&state=${p.get('state')}&iss=http%3A%2F%2F127.0.0.1%3A9`,
        /another issuer/,
      ],
    ] as const) {
      it(`with ${what}: no code is exchanged, nothing stored`, async () => {
        const before = world.as.requests.filter((r) => r.path === '/token').length;
        const done = await loginThroughBrowser(home, 'notes', world.as.issuer, {
          drive: async (url) => {
            const params = new URL(url).searchParams;
            const redirect = params.get('redirect_uri')!;
            expect(new URL(redirect).hostname).toMatch(/^(127\.0\.0\.1|localhost|\[::1\])$/);
            await fetch(`${redirect}?${forge(params)}`);
          },
        });
        expect(done.code).not.toBe(0);
        expect(done.stderr).toMatch(reason);
        expect(world.as.requests.filter((r) => r.path === '/token').length).toBe(before);
        expect((await heldRecord(home, 'notes'))?.tokens).toBeUndefined();
      });
    }
  });

  it('an access token issued for another audience: refused at login, never sent to the server', async () => {
    world.as.forceAudience('http://127.0.0.1:9/another-resource');
    try {
      const done = await loginThroughBrowser(home, 'notes', world.as.issuer);
      expect(done.browser).toBeDefined();
      expect(done.code, done.stderr).not.toBe(0);
      expect(done.stderr).toMatch(/audience|resource/i);
      expect((await heldRecord(home, 'notes'))?.tokens).toBeUndefined();
      expect(world.notes.authorizations()).toEqual([]);
    } finally {
      world.as.forceAudience(undefined);
    }
  });

  it('plain http to another machine is refused at mcp add, before anything is contacted', async () => {
    const added = await rf(['mcp', 'add', 'plain', '--url', 'http://10.11.12.13/mcp', '--oauth'], home);
    expect(added.code).not.toBe(0);
    expect(added.stderr).toContain('must use https');
  });

  it('an authorization server the organisation does not list: the login is refused, a held token is not used', async () => {
    // First a good login, then the organisation's signed policy naming only another issuer.
    const done = await loginThroughBrowser(home, 'notes', world.as.issuer);
    expect(done.code, done.stderr).toBe(0);
    /** A call through a fresh `mcp serve`: its answer (a result or the error) and the gateway's stderr. */
    const callNotes = async () => {
      const served = await connectStdio(home);
      try {
        const answer = await served.client.callTool({ name: 'notes_read_note', arguments: {} }).then(
          (result) => ({ isError: result.isError === true, text: JSON.stringify(result.content) }),
          (error: Error) => ({ isError: true, text: error.message }),
        );
        return { ...answer, stderr: served.stderr() };
      } finally {
        transcript.push(served.stderr());
        await served.close();
      }
    };
    expect((await callNotes()).isError).toBeFalsy(); // works, and its tools are pinned
    const org = await makeOrg(join(home, '..', 'org'));
    const policy = await signPolicy(
      org,
      policyDocument({ oauth: { authorization_servers: ['https://login.example.com'] } }),
      'oauth-listed',
    );
    await install(policy, org, {
      RINGFENCE_HOME: home,
      RINGFENCE_POLICY_DIR: process.env.RINGFENCE_POLICY_DIR!,
    });

    const before = asHits();
    const again = await loginThroughBrowser(home, 'notes', world.as.issuer);
    expect(again.code).not.toBe(0);
    expect(again.browser).toBeUndefined();
    expect(again.stderr).toContain(world.as.issuer);
    expect(asHits()).toBe(before);

    const sent = world.notes.authorizations().length;
    const refused = await callNotes();
    // Refused, with the reason where the person reads it (the answer or the gateway's stderr).
    expect(refused.isError).toBe(true);
    expect(`${refused.text}\n${refused.stderr}`).toContain(world.as.issuer);
    expect(world.notes.authorizations().length).toBe(sent);
  });

  it('no secret the provider issued appears in any output or the audit log; audit verify passes', async () => {
    const secrets = world.as.issued;
    expect(leaked(`${transcript.join('\n')}\n${await readableFiles(home)}`, secrets)).toEqual([]);
    const verify = await rf(['audit', 'verify'], home);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
