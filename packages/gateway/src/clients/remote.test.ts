// Issue 23: `client import` of `npx mcp-remote URL` entries and of clients' own OAuth remote
// entries becomes an OAuth registration with a login due; hostile inputs (credentials in the
// URL, plain http to another machine, a fixed Authorization header, a client secret in the file)
// are refused or moved, and no secret value is ever shown.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ServerConfig } from '../config/servers.js';
import { planRegistration, type RegistrationInput } from '../registration/plan.js';
import { importClient } from './import.js';
import { translateEntry } from './translate.js';

const npx = (...args: string[]) => translateEntry({ command: 'npx', args });

describe('npx mcp-remote URL', () => {
  it('becomes an OAuth registration of the URL', () => {
    expect(npx('mcp-remote', 'https://mcp.example.com/mcp')).toMatchObject({
      kind: 'register',
      input: { url: 'https://mcp.example.com/mcp', oauth: {} },
    });
  });

  it('with npx -y, a version, a callback port, a transport and a plain header', () => {
    const t = npx(
      '-y',
      'mcp-remote@0.1.29',
      'https://mcp.example.com/mcp',
      '3334',
      '--transport',
      'http-first',
      '--header',
      'X-Tenant: acme',
      '--debug',
    );
    expect(t).toEqual({
      kind: 'register',
      input: { url: 'https://mcp.example.com/mcp', headers: ['X-Tenant=acme'], oauth: {} },
      notes: [expect.stringContaining('was bridged by mcp-remote')],
    });
  });

  it('with a pre-registered public client and its scope', () => {
    const t = npx(
      'mcp-remote',
      'https://mcp.example.com/mcp',
      '--static-oauth-client-info',
      '{"client_id":"ringfence-public"}',
      '--static-oauth-client-metadata={"scope":"read write"}',
    );
    expect(t).toMatchObject({
      kind: 'register',
      input: { oauth: { client_id: 'ringfence-public', scope: 'read write' } },
    });
  });

  it('an SSE-only bridge is skipped with the reason', () => {
    const t = npx('mcp-remote', 'https://mcp.example.com/sse', '--transport', 'sse-only');
    expect(t).toMatchObject({ kind: 'skip', reason: expect.stringContaining('SSE transport') });
  });

  it('a fixed Authorization header keeps it a plain registration; the header is moved, not shown', () => {
    const t = npx(
      'mcp-remote',
      'https://mcp.example.com/mcp',
      '--header',
      'Authorization: Bearer hdrSecret01',
    );
    expect(t.kind).toBe('register');
    if (t.kind !== 'register') return;
    expect(t.input).toEqual({
      url: 'https://mcp.example.com/mcp',
      headers: ['Authorization=Bearer hdrSecret01'],
    });
    expect(t.notes.join('\n')).toContain('kept in the home (0600)');
    expect(t.notes.join('\n')).not.toContain('hdrSecret01');
  });

  it('refuses credentials in the URL, plain http to another machine, a missing URL', () => {
    const userinfo = npx('mcp-remote', 'https://me:urlSecret02@mcp.example.com/mcp');
    expect(userinfo).toMatchObject({ kind: 'skip', reason: expect.stringContaining('not in the URL') });
    expect(JSON.stringify(userinfo)).not.toContain('urlSecret02');
    expect(npx('mcp-remote', 'http://mcp.example.com/mcp', '--allow-http')).toMatchObject({
      kind: 'skip',
      reason: expect.stringContaining('must use https'),
    });
    expect(npx('mcp-remote', '--transport', 'http-only')).toMatchObject({ kind: 'skip' });
    expect(npx('mcp-remote', 'http://127.0.0.1:8080/mcp')).toMatchObject({
      kind: 'register',
      input: { url: 'http://127.0.0.1:8080/mcp', oauth: {} },
    });
  });

  it('a client secret in the file, or a client read from a file, is not imported', () => {
    const secret = npx(
      'mcp-remote',
      'https://mcp.example.com/mcp',
      '--static-oauth-client-info',
      '{"client_id":"c","client_secret":"clientSecret03"}',
    );
    expect(secret).toMatchObject({ kind: 'skip', reason: expect.stringContaining('takes only at mcp add') });
    expect(JSON.stringify(secret)).not.toContain('clientSecret03');
    expect(
      npx('mcp-remote', 'https://mcp.example.com/mcp', '--static-oauth-client-info', '@/home/me/client.json'),
    ).toMatchObject({ kind: 'skip', reason: expect.stringContaining('from a file') });
  });
});

describe("a client's own OAuth remote entry", () => {
  it("Claude Code's oauth field: client ID and scopes carried, the callback port said not to be", () => {
    const t = translateEntry({
      type: 'http',
      url: 'https://mcp.example.com/mcp',
      oauth: { clientId: 'cc-client', scopes: 'issues:read', callbackPort: 8080 },
    });
    expect(t).toMatchObject({
      kind: 'register',
      input: { url: 'https://mcp.example.com/mcp', oauth: { client_id: 'cc-client', scope: 'issues:read' } },
      notes: [expect.stringContaining('callback port is not carried')],
    });
  });

  it("Cursor's auth field: scopes as a list; a CLIENT_SECRET is refused and not shown", () => {
    expect(
      translateEntry({ url: 'https://mcp.example.com/mcp', auth: { CLIENT_ID: 'cu', scopes: ['a', 'b'] } }),
    ).toMatchObject({ kind: 'register', input: { oauth: { client_id: 'cu', scope: 'a b' } } });
    const secret = translateEntry({
      url: 'https://mcp.example.com/mcp',
      auth: { CLIENT_ID: 'cu', CLIENT_SECRET: 'cursorSecret04' },
    });
    expect(secret.kind).toBe('skip');
    expect(JSON.stringify(secret)).not.toContain('cursorSecret04');
  });

  it('an OAuth field beside a fixed Authorization header is skipped; a url without either stays plain', () => {
    expect(
      translateEntry({
        url: 'https://mcp.example.com/mcp',
        headers: { Authorization: 'Bearer x' },
        oauth: { clientId: 'c' },
      }),
    ).toMatchObject({ kind: 'skip', reason: expect.stringContaining('both an OAuth login and a fixed') });
    expect(translateEntry({ url: 'https://mcp.example.com/mcp' })).toMatchObject({
      kind: 'register',
      input: { url: 'https://mcp.example.com/mcp' },
    });
    expect(translateEntry({ url: 'https://u:p@mcp.example.com/mcp' }).kind).toBe('skip');
  });
});

describe('mcp add with oauth (what import registers)', () => {
  const plan = (input: Omit<RegistrationInput, 'name'>) =>
    planRegistration({ name: 'x', ...input }, { defaultEgress: 'deny' });
  it('is recorded on the remote registration', () => {
    expect(plan({ url: 'https://mcp.example.com/mcp', oauth: { scope: 'a' } })).toMatchObject({
      transport: 'http',
      server: { url: 'https://mcp.example.com/mcp', oauth: { scope: 'a' } },
    });
  });
  it('is refused for a contained server', () => {
    expect(() => plan({ image: 'alpine:3', oauth: {} })).toThrow(/--oauth applies to remote servers/);
  });
});

describe('client import of an mcp-remote entry', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rf-import-oauth-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('says a login is due with the command, and shows no secret of a hostile config', async () => {
    const path = join(dir, 'claude_desktop_config.json');
    const secrets = ['hdrSecret11', 'urlSecret12', 'clientSecret13', 'querySecret14'];
    await writeFile(
      path,
      JSON.stringify({
        mcpServers: {
          Tracker: { command: 'npx', args: ['-y', 'mcp-remote@0.1.29', 'https://tracker.example.com/mcp'] },
          wiki: {
            command: 'npx',
            args: [
              'mcp-remote',
              'https://wiki.example.com/mcp',
              '--header',
              `Authorization: Bearer ${secrets[0]}`,
            ],
          },
          creds: { command: 'npx', args: ['mcp-remote', `https://me:${secrets[1]}@x.example.com/mcp`] },
          secret: {
            command: 'npx',
            args: [
              'mcp-remote',
              `https://s.example.com/mcp?token=${secrets[3]}`,
              '--static-oauth-client-info',
              `{"client_id":"c","client_secret":"${secrets[2]}"}`,
            ],
          },
          plain: { command: 'npx', args: ['mcp-remote', 'http://10.0.0.5/mcp'] },
        },
      }),
    );
    const registered: RegistrationInput[] = [];
    const printed: string[] = [];
    const result = await importClient({
      kind: 'claude-desktop',
      path,
      home: '/home/me/.ringfence',
      launch: { command: '/usr/bin/node', args: ['/opt/ringfence/bin/run.js'] },
      dryRun: false,
      registered: [],
      register: async (input) => {
        registered.push(input);
        return { name: input.name } as ServerConfig;
      },
      progress: (line) => printed.push(line),
    });
    const row = (entry: string) => result.rows.find((r) => r.entry === entry)!;
    expect(row('Tracker')).toMatchObject({
      outcome: 'imported',
      server: 'tracker',
      login: 'ringfence mcp auth login tracker',
    });
    expect(row('wiki')).toMatchObject({ outcome: 'imported' });
    expect(row('wiki').login).toBeUndefined();
    for (const entry of ['creds', 'secret', 'plain']) expect(row(entry).outcome).toBe('skipped');
    expect(registered).toEqual([
      { name: 'tracker', url: 'https://tracker.example.com/mcp', oauth: {} },
      { name: 'wiki', url: 'https://wiki.example.com/mcp', headers: [`Authorization=Bearer ${secrets[0]}`] },
    ]);
    const everything = `${JSON.stringify(result)}\n${printed.join('\n')}`;
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});
