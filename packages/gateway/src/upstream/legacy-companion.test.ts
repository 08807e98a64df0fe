import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { asOwner } from '../ports/call-owner.js';
import type { ServerRequest } from '../ports/upstream.js';
import { dualEraServer } from './__fixtures__/dual-era-server.js';
import { RemoteUpstream } from './remote.js';

type Fixture = Awaited<ReturnType<typeof dualEraServer>>;
const opened: { upstream: RemoteUpstream; server: Fixture }[] = [];
afterEach(async () => {
  for (const { upstream, server } of opened.splice(0)) {
    await upstream.close().catch(() => {});
    await server.close();
  }
});

async function started(options: { legacy?: boolean } = {}) {
  const server = await dualEraServer(options);
  const config: HttpServerConfig = {
    name: 'dual',
    transport: 'http',
    url: server.url,
    allow_elicitation: true,
  };
  const upstream = new RemoteUpstream(config);
  opened.push({ upstream, server });
  const asked: ServerRequest[] = [];
  upstream.onServerRequest(async (request) => {
    asked.push(request);
    return { action: 'accept', content: { said: (request.params as { message: string }).message } };
  });
  await upstream.start();
  return { server, upstream, asked };
}

const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('a remote server that offers both eras: a 2025 caller is served in 2025', () => {
  it('opens a 2025 session lazily at the first 2025 call; the server asks mid-call on it', async () => {
    const { server, upstream, asked } = await started();
    expect(upstream.era()).toBe('modern');
    expect(server.seen.map((s) => s.method)).not.toContain('initialize');
    // A 2026 caller keeps the primary: the same object, nothing opened.
    expect(upstream.forCaller('modern')).toBe(upstream);
    const side = upstream.forCaller('legacy');
    expect(await side.settledEra!()).toBe('legacy');
    expect(server.opened()).toBe(1);
    const result = await side.callTool('ask', { label: 'hello' });
    expect(text(result)).toContain('"said":"hello"');
    expect(asked.map((r) => r.method)).toEqual(['elicitation/create']);
    const calls = server.seen.filter((s) => s.method === 'tools/call');
    expect(calls).toEqual([{ method: 'tools/call', era: 'legacy' }]);
    // Listings stay on the primary (2026) connection.
    await upstream.listTools();
    expect(server.seen.filter((s) => s.method === 'tools/list').map((s) => s.era)).toEqual(['modern']);
    // One session for every 2025 call.
    await side.callTool('ask', { label: 'again' });
    expect(server.opened()).toBe(1);
  });

  it('a 2025 session the server forgot (404) is opened again once, and the call goes through', async () => {
    const { server, upstream, asked } = await started();
    const side = upstream.forCaller('legacy');
    await side.callTool('ask', { label: 'one' });
    server.forgetSessions();
    const result = await side.callTool('ask', { label: 'two' });
    expect(text(result)).toContain('"said":"two"');
    expect(server.opened()).toBe(2);
    expect(asked).toHaveLength(2);
  });

  it('the same call from a 2026 caller stays 2026: the server cannot ask mid-call there', async () => {
    const { server, upstream, asked } = await started();
    const result = await upstream.forCaller('modern').callTool('ask', { label: 'x' });
    expect(text(result)).toContain('asking failed');
    expect(asked).toEqual([]);
    expect(server.opened()).toBe(0);
  });

  it('the 2025 session closes with the upstream', async () => {
    const { server, upstream } = await started();
    await upstream.forCaller('legacy').callTool('ask', { label: 'x' });
    expect(server.sessions()).toBe(1);
    await upstream.close();
    // The session was ended on the server's side too (DELETE).
    expect(server.sessions()).toBe(0);
    await expect(upstream.forCaller('legacy').callTool('ask', {})).rejects.toThrow();
  });

  it('a 2026-only server (initialize refused) serves a 2025 caller on the primary, learnt once', async () => {
    const { server, upstream } = await started({ legacy: false });
    const side = upstream.forCaller('legacy');
    expect(await side.settledEra!()).toBe('modern');
    expect(side.era!()).toBe('modern');
    const result = await side.callTool('ask', { label: 'x' });
    expect(text(result)).toContain('asking failed');
    const initializes = server.seen.filter((s) => s.method === 'initialize').length;
    await side.callTool('ask', { label: 'y' });
    expect(server.seen.filter((s) => s.method === 'initialize').length).toBe(initializes);
  });

  it('a companion that cannot be opened is refused, naming the server, never served by the primary', async () => {
    const { server, upstream } = await started();
    // The server is gone: the 2025 session cannot be opened (an outage, not a refusal).
    await server.close();
    const side = upstream.forCaller('legacy');
    // Still a 2025 request (refused at the call, not turned into a 2026 one).
    expect(await side.settledEra!()).toBe('legacy');
    const failure = side.callTool('ask', { label: 'x' });
    await expect(failure).rejects.toThrow(
      /dual speaks MCP 2026-07-28 to ringfence.*could not be opened.*--protocol 2025/,
    );
  });
});

describe('a server request on a call’s own answer stream is that call’s', () => {
  it('two callers at once: each request goes with its own call’s owner, never the other’s', async () => {
    const { server, upstream, asked } = await started();
    const side = upstream.forCaller('legacy');
    await side.settledEra!();
    const gate = server.hold();
    const alice = { who: 'alice' };
    const bob = { who: 'bob' };
    const a = asOwner(alice, () => side.callTool('ask', { label: 'for alice' }));
    const b = asOwner(bob, () => side.callTool('ask', { label: 'for bob' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    gate.open();
    await Promise.all([a, b]);
    expect(asked).toHaveLength(2);
    for (const request of asked) {
      const message = (request.params as { message: string }).message;
      expect(request.owner).toBe(message === 'for alice' ? alice : bob);
    }
  });

  it('the owner named on the call (as the gateway names it) goes with it, across the companion’s wait', async () => {
    const { server, upstream, asked } = await started();
    const side = upstream.forCaller('legacy');
    // Not settled first: the companion opens after an await, where no context would survive.
    const gate = server.hold();
    const alice = { who: 'alice' };
    const bob = { who: 'bob' };
    const a = side.callTool('ask', { label: 'for alice' }, { owner: alice });
    const b = side.callTool('ask', { label: 'for bob' }, { owner: bob });
    await new Promise((resolve) => setTimeout(resolve, 100));
    gate.open();
    await Promise.all([a, b]);
    expect(asked).toHaveLength(2);
    for (const request of asked) {
      const message = (request.params as { message: string }).message;
      expect(request.owner).toBe(message === 'for alice' ? alice : bob);
    }
  });
});
