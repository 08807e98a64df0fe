// Issue 23 end to end: a remote MCP server behind OAuth, put behind ringfence as a person would,
// with real processes only: the `ringfence` CLI, `mcp serve` over stdio with the SDK's client, a
// real authorization server (oidc-provider) on loopback, an MCP server that checks its JWTs, and
// Debian's chromium filling the provider's own login and consent pages.
//   add → first call says a login is due (a tool result naming the command) → `mcp auth login` in
//   the browser → calls work → an expired token is refreshed silently → a call wanting the wider
//   scope asks for it, the login grants it, the call works → a revoked grant tells the client to
//   log in → a registration moved to another origin gets no token → logout.
// Every token, refresh token, client secret and code the provider issued is then searched for,
// byte for byte, in everything ringfence printed, every answer the client saw, and the audit log;
// `audit verify` passes.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRecordingOrigin } from '../fixtures/oauth/recording-origin.mjs';
import { unwrap } from '../helpers/cli.js';
import { connectStdio, firstText, freshHome } from '../helpers/mcp.js';
import {
  codeOf,
  heldRecord,
  heldSecrets,
  leaked,
  loginThroughBrowser,
  NARROW_SCOPE,
  type OAuthWorld,
  readableFiles,
  requireChromium,
  rf,
  startOAuthWorld,
  transcript,
  WIDE_SCOPE,
} from '../helpers/oauth.js';
import { stopAll } from '../helpers/processes.js';

const LOGIN = 'ringfence mcp auth login notes';

describe('a remote server behind OAuth through ringfence (issue 23)', () => {
  let home: string;
  let world: OAuthWorld;
  /** What the AI client saw: every tool result, for the no-passthrough search. */
  const seenByClient: string[] = [];
  const codes: string[] = [];

  /** One call through a fresh `mcp serve` (stdio), as a client starting a session would make it. */
  async function call(tool: string, args: Record<string, unknown> = {}) {
    const served = await connectStdio(home);
    try {
      const result = await served.client.callTool({ name: tool, arguments: args });
      const text = firstText(result);
      seenByClient.push(JSON.stringify(result));
      return { text, isError: result.isError === true, stderr: served.stderr() };
    } finally {
      transcript.push(served.stderr());
      await served.close();
    }
  }

  async function login(args: string[] = []) {
    const done = await loginThroughBrowser(home, 'notes', world.as.issuer, { args });
    const code = codeOf(done.browser?.url);
    if (code) codes.push(code);
    return done;
  }

  beforeAll(async () => {
    requireChromium();
    home = await freshHome();
    world = await startOAuthWorld();
    // Asking for the narrow scope only (else the login asks for all the server's scopes_supported),
    // so the wider one is a step-up.
    const added = await rf(
      ['mcp', 'add', 'notes', '--url', world.notes.url, '--oauth', '--scope', NARROW_SCOPE],
      home,
    );
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await stopAll();
    await world?.close();
  });

  it('before any login: mcp serve says the login is due, naming the command; no token is sent', async () => {
    const served = await connectStdio(home);
    try {
      const { tools } = await served.client.listTools();
      seenByClient.push(JSON.stringify(tools));
      // Nothing of it was ever pinned: the client is shown ringfence's one login_needed tool,
      // whose answer names the command (a pinned tool answers the same: revocation, logout below).
      expect(tools.filter((t) => t.name.startsWith('notes_')).map((t) => t.name)).toEqual([
        'notes_login_needed',
      ]);
      const told = await served.client.callTool({ name: 'notes_login_needed', arguments: {} });
      seenByClient.push(JSON.stringify(told));
      expect(told.isError).toBe(true);
      expect(JSON.stringify(told)).toContain('ringfence mcp auth login notes');
      expect(unwrap(served.stderr())).toContain(LOGIN);
    } finally {
      transcript.push(served.stderr());
      await served.close();
    }
    expect(world.notes.authorizations()).toEqual([]);
  });

  it('mcp auth login: the provider’s own pages in chromium, then calls work with a token for this server only', async () => {
    const done = await login();
    expect(done.code, done.stderr).toBe(0);
    expect(done.browser?.url.startsWith('http://127.0.0.1:')).toBe(true);
    // The provider's page asks for a web font; the browser was kept on loopback.
    expect(done.browser?.offLoopback.every((url) => url.startsWith('https://fonts.googleapis.com/'))).toBe(
      true,
    );

    const held = await heldRecord(home, 'notes');
    expect(held?.tokens?.scope).toBe(NARROW_SCOPE);
    expect(held?.authorization_server.issuer).toBe(world.as.issuer);
    expect(held?.resource).toBe(world.notes.resource);
    const status = await rf(['mcp', 'auth', 'status', 'notes'], home);
    expect(status.code, status.stderr).toBe(0);
    expect(status.stdout).toContain(world.as.issuer);

    const read = await call('notes_read_note', { id: '7' });
    expect(read.isError, read.text).toBe(false);
    expect(read.text).toBe('note 7: hello from behind OAuth');
    const sent = world.notes.authorizations();
    expect(sent.length).toBeGreaterThan(0);
    const token = (await heldRecord(home, 'notes'))?.tokens?.access_token;
    for (const header of sent) expect(header).toBe(`Bearer ${token}`);
  });

  it('an expired access token is renewed with the refresh token, without a browser', async () => {
    world.as.setAccessTokenTtl(3);
    try {
      const again = await login();
      expect(again.code, again.stderr).toBe(0);
      const first = (await heldRecord(home, 'notes'))?.tokens?.access_token;
      await new Promise((resolve) => setTimeout(resolve, 4000)); // the server now refuses `first`
      const tokenRequests = world.as.requests.filter(
        (r) => r.method === 'POST' && r.path === '/token',
      ).length;
      const read = await call('notes_read_note');
      expect(read.isError, read.text).toBe(false);
      expect(read.text).toContain('hello from behind OAuth');
      const renewed = (await heldRecord(home, 'notes'))?.tokens?.access_token;
      expect(renewed).not.toBe(first);
      expect(world.notes.authorizations().at(-1)).toBe(`Bearer ${renewed}`);
      expect(
        world.as.requests.filter((r) => r.method === 'POST' && r.path === '/token').length,
      ).toBeGreaterThan(tokenRequests);
    } finally {
      world.as.setAccessTokenTtl(3600);
    }
  });

  it('step-up: a call needing the wider scope says so; the login asks for it; the call then works', async () => {
    const refused = await call('notes_write_note', { text: 'hi' });
    expect(refused.isError).toBe(true);
    expect(refused.text).toContain(LOGIN);
    expect(refused.text).toContain(WIDE_SCOPE);
    expect(world.notes.calls.some((c) => c.name === 'write_note')).toBe(false);

    // The person runs the command the result names, as it is written.
    const named = /ringfence mcp auth login notes(?: --scope '([^']+)')?/.exec(refused.text);
    const done = await login(named?.[1] ? ['--scope', named[1]] : []);
    expect(done.code, done.stderr).toBe(0);
    expect((await heldRecord(home, 'notes'))?.tokens?.scope?.split(' ')).toEqual(
      expect.arrayContaining([NARROW_SCOPE, WIDE_SCOPE]),
    );
    const written = await call('notes_write_note', { text: 'hi' });
    expect(written.isError, written.text).toBe(false);
    expect(written.text).toBe('wrote: hi');
  });

  it('a grant revoked at the authorization server: the client is told to log in again', async () => {
    await world.as.revokeAll();
    const read = await call('notes_read_note');
    expect(read.isError).toBe(true);
    expect(read.text).toContain(LOGIN);
    expect(read.text).not.toContain('hello from behind OAuth');
  });

  it('a registration moved to another origin: its token is not sent there', async () => {
    const done = await login();
    expect(done.code, done.stderr).toBe(0);
    const elsewhere = await startRecordingOrigin();
    const file = join(home, 'mcp-servers.json');
    const before = await readFile(file, 'utf8');
    try {
      await writeFile(file, before.replace(world.notes.url, `${elsewhere.origin}/mcp`));
      const read = await call('notes_read_note');
      expect(read.isError).toBe(true);
      expect(read.text).toContain(LOGIN);
      expect(elsewhere.requests.filter((r) => r.authorization)).toEqual([]);
    } finally {
      await writeFile(file, before);
      await elsewhere.close();
    }
  });

  it('logout forgets the tokens; the next call says a login is due', async () => {
    const out = await rf(['mcp', 'auth', 'logout', 'notes'], home);
    expect(out.code, out.stderr).toBe(0);
    expect((await heldRecord(home, 'notes'))?.tokens).toBeUndefined();
    const read = await call('notes_read_note');
    expect(read.isError).toBe(true);
    expect(read.text).toContain(LOGIN);
  });

  it('no token, refresh token, client secret or code in any output, any client answer, or the audit log', async () => {
    const secrets = [...new Set([...world.as.issued, ...codes, ...(await heldSecrets(home))])];
    expect(world.as.issued.length).toBeGreaterThan(6);
    expect(codes.length).toBeGreaterThanOrEqual(4);
    expect(leaked(transcript.join('\n'), secrets)).toEqual([]);
    expect(leaked(seenByClient.join('\n'), secrets)).toEqual([]);
    const files = await readableFiles(home);
    expect(files).toContain('oauth'); // the audit says tokens were used, by digest
    expect(leaked(files, secrets)).toEqual([]);
    const verify = await rf(['audit', 'verify'], home);
    expect(verify.code, verify.stdout + verify.stderr).toBe(0);
  });
});
