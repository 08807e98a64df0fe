// A remote server whose OAuth login is needed, through the gateway: its pinned tools stay listed,
// a call answers a tool result naming the login command (stderr says it at start), a login made
// while the gateway runs is picked up at the next call, and a token revoked later ends the call in
// flight with the same words. Real RemoteUpstream and a bearer-checking SDK server on loopback.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../audit/log.js';
import type { HttpServerConfig } from '../config/servers.js';
import { PinStore } from '../pins/store.js';
import type { SchemaChecks } from '../ports/schema.js';
import { type ProtectedMcp, protectedMcp } from '../remote-auth/__fixtures__/protected-mcp.js';
import { TokenHolder } from '../remote-auth/holder.js';
import { type OAuthEntry, OAuthTokenStore } from '../remote-auth/store.js';
import { RemoteUpstream } from '../upstream/remote.js';
import { Gateway } from './gateway.js';
import { serveHttp } from './http.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };

let home: string;
let mcp: ProtectedMcp;
let tokens: OAuthTokenStore;
let lines: string[];
let gateway: Gateway | undefined;
let audit: AuditLog;

beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-login-needed-'));
  mcp = await protectedMcp();
  tokens = new OAuthTokenStore(home);
  lines = [];
  audit = await AuditLog.open({ path: join(home, 'audit.jsonl'), session: 'test' });
});
afterEach(async () => {
  await gateway?.close();
  gateway = undefined;
  await audit.close().catch(() => {});
  await mcp.close();
  await rm(home, { recursive: true, force: true });
});

const login = (access: string): OAuthEntry => ({
  resource: mcp.url,
  resource_origin: mcp.origin,
  authorization_server: {
    issuer: 'http://127.0.0.1:1',
    authorization_endpoint: 'http://127.0.0.1:1/authorize',
    token_endpoint: 'http://127.0.0.1:1/token',
  },
  client: { client_id: 'ringfence-test', via: 'dynamic' },
  tokens: { access_token: access, token_type: 'Bearer', obtained_at: Date.now(), scope: 'read' },
});

async function start(): Promise<Gateway> {
  const config: HttpServerConfig = { name: 'files', transport: 'http', url: mcp.url, oauth: {} };
  const holder = new TokenHolder(config, {
    store: tokens,
    onEvent: (event) => void audit.append({ type: 'mcp.oauth', refs: { server: 'files', ...event } }),
  });
  gateway = new Gateway({
    servers: [config],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => new RemoteUpstream(config, undefined, undefined, holder),
    log: (line) => lines.push(line),
    session: 'test',
  });
  await gateway.start();
  return gateway;
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('a remote server whose login is needed', () => {
  it('keeps its pinned tools listed, answers calls with the command, and picks up a new login', async () => {
    // First a logged-in start pins its tools.
    mcp.tokens.set('AT-secret-1', ['read']);
    await tokens.put('files', login('AT-secret-1'));
    await (await start()).close();
    gateway = undefined;
    // Then the login is gone (logged out): the next start cannot reach it.
    await tokens.forget('files');
    const g = await start();
    expect(lines.join('\n')).toContain('files needs an OAuth login and none was made yet');
    expect(lines.join('\n')).toContain('ringfence mcp auth login files');
    expect(g.listTools().map((t) => t.name)).toEqual(['files_read', 'files_write']);
    const refused = (await g.callTool('files_read', {}, {}, undefined)) as { isError?: boolean };
    expect(refused.isError).toBe(true);
    expect(text(refused)).toBe(
      'ringfence: files/read could not run: files needs an OAuth login and none was made yet. Log in (a browser opens) with: ringfence mcp auth login files',
    );
    // A login made while the gateway runs: the next call reaches the server.
    mcp.tokens.set('AT-secret-2', ['read']);
    await tokens.put('files', login('AT-secret-2'));
    expect(text(await g.callTool('files_read', {}, {}, undefined))).toBe('read done');
    expect(g.serverStates().get('files')?.status).toBe('running');
    // Revoked later: the call in flight gets the same kind of answer.
    mcp.tokens.clear();
    const revoked = await g.callTool('files_read', {}, {}, undefined);
    expect(text(revoked)).toMatch(
      /files's OAuth login is no longer accepted.*ringfence mcp auth login files$/,
    );
    // Logged in again (the dead token is not sent again until then); then a step-up names the scope.
    mcp.tokens.set('AT-secret-3', ['read']);
    await tokens.put('files', login('AT-secret-3'));
    expect(text(await g.callTool('files_read', {}, {}, undefined))).toBe('read done');
    expect(text(await g.callTool('files_write', {}, {}, undefined))).toContain(
      "ringfence mcp auth login files --scope 'read write'",
    );
    await g.close();
    gateway = undefined;
    await audit.close();
    const log = await readFile(join(home, 'audit.jsonl'), 'utf8');
    expect(log).toContain('"type":"mcp.oauth"');
    for (const secret of ['AT-secret-1', 'AT-secret-2', 'AT-secret-3']) {
      expect(log).not.toContain(secret);
      expect(lines.join('\n')).not.toContain(secret);
    }
  });

  it("a server never logged in and never pinned is shown as ringfence's login_needed tool, which names the command, until a login", async () => {
    const g = await start();
    expect(g.serverStates().get('files')?.status).toBe('login-needed');
    expect(lines.some((l) => l.startsWith('ringfence: files: files needs an OAuth login'))).toBe(true);
    expect(lines.join('\n')).toContain('login_needed');
    const listed = g.listTools();
    expect(listed.map((t) => t.name)).toEqual(['files_login_needed']);
    expect(listed[0]!.description).toContain('ringfence mcp auth login files');
    const refused = (await g.callTool('files_login_needed', {}, {}, undefined)) as { isError?: boolean };
    expect(refused.isError).toBe(true);
    expect(text(refused)).toContain('files needs an OAuth login and none was made yet');
    expect(text(refused)).toContain('ringfence mcp auth login files');
    // Nothing of the placeholder was pinned: it is the gateway's, not the server's.
    expect(await new PinStore(home).server('files')).toBeUndefined();
    // Logged in meanwhile: calling it starts the server, whose own tools replace it.
    mcp.tokens.set('AT-secret-first', ['read']);
    await tokens.put('files', login('AT-secret-first'));
    expect(text(await g.callTool('files_login_needed', {}, {}, undefined))).toContain(
      'files is logged in now',
    );
    expect(g.serverStates().get('files')?.status).toBe('running');
    expect(g.listTools().map((t) => t.name)).toEqual(['files_read', 'files_write']);
    expect(text(await g.callTool('files_read', {}, {}, undefined))).toBe('read done');
  });

  it("no token passthrough: the client's bearer never reaches the server, the server's token never the client", async () => {
    mcp.tokens.set('AT-secret-upstream', ['read']);
    await tokens.put('files', login('AT-secret-upstream'));
    const g = await start();
    const served = await serveHttp(g, {
      address: '127.0.0.1:0',
      resolveToken: (t) => (t === 'agent-secret-token' ? {} : undefined),
    });
    const client = new Client({ name: 'passthrough-test', version: '1' });
    try {
      await client.connect(
        new StreamableHTTPClientTransport(new URL(served.url), {
          requestInit: { headers: { authorization: 'Bearer agent-secret-token' } },
        }),
      );
      const answered = await client.callTool({ name: 'files_read', arguments: {} });
      expect(JSON.stringify(answered)).toContain('read done');
      // Revoked: the refusal the client reads names the command, not the token.
      mcp.tokens.clear();
      const refused = await client.callTool({ name: 'files_read', arguments: {} });
      const listed = await client.listTools();
      const seenByClient = JSON.stringify([answered, refused, listed]);
      expect(seenByClient).toContain('ringfence mcp auth login files');
      expect(seenByClient).not.toContain('AT-secret-upstream');
      // Every request the server saw carried the held token, none the client's.
      expect(mcp.seen.length).toBeGreaterThan(0);
      expect(mcp.seen.every((header) => header === 'Bearer AT-secret-upstream')).toBe(true);
      expect(mcp.seen.join()).not.toContain('agent-secret-token');
    } finally {
      await client.close().catch(() => {});
      await served.close();
    }
  });
});
