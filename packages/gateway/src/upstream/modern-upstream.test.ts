import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { ECHO_SCHEMA, modernServer } from './__fixtures__/modern-http-server.js';
import type { EraMemory } from './era.js';
import { RemoteUpstream } from './remote.js';

type Fixture = Awaited<ReturnType<typeof modernServer>>;
const opened: { upstream?: RemoteUpstream; server: Fixture }[] = [];
afterEach(async () => {
  for (const { upstream, server } of opened.splice(0)) {
    await upstream?.close().catch(() => {});
    await server.close();
  }
});

function memory(): EraMemory & { kept: Map<string, unknown> } {
  const kept = new Map<string, unknown>();
  return {
    kept,
    recall: async (config) => kept.get(config.name) as never,
    remember: async (config, verdict) => {
      kept.set(config.name, { ...verdict, registration: 'x', checked_at: new Date().toISOString() });
    },
    forget: async (name) => {
      kept.delete(name);
    },
  };
}

async function started(eras?: EraMemory) {
  const server = await modernServer();
  const config: HttpServerConfig = { name: 'modern', transport: 'http', url: server.url };
  const upstream = new RemoteUpstream(config, undefined, eras);
  opened.push({ upstream, server });
  await upstream.start();
  return { server, upstream };
}

const until = async (check: () => boolean, ms = 5_000) => {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('a 2026-07-28 upstream over HTTP', () => {
  it('is probed once, spoken to in 2026, and the verdict kept; the next start does not probe', async () => {
    const eras = memory();
    const { server, upstream } = await started(eras);
    expect(upstream.era()).toBe('modern');
    expect(server.seen.map((s) => s.method)).toEqual(['server/discover', 'subscriptions/listen']);
    expect(eras.kept.get('modern')).toMatchObject({
      era: 'modern',
      discover: { supportedVersions: ['2026-07-28'] },
    });
    const { tools } = await upstream.listTools();
    expect(tools).toEqual([expect.objectContaining({ name: 'echo' })]);

    const again = new RemoteUpstream({ name: 'modern', transport: 'http', url: server.url }, undefined, eras);
    opened.push({ upstream: again, server: await modernServer() });
    const before = server.seen.length;
    await again.start();
    expect(server.seen.slice(before).map((s) => s.method)).toEqual(['subscriptions/listen']);
  });

  it('a stale 2026 verdict that no longer connects is dropped and the server probed again', async () => {
    const eras = memory();
    eras.kept.set('modern', {
      era: 'modern',
      discover: { supportedVersions: ['2099-01-01'], capabilities: {}, resultType: 'complete' },
      registration: 'x',
      checked_at: new Date().toISOString(),
    });
    const { server, upstream } = await started(eras);
    expect(upstream.era()).toBe('modern');
    expect(server.seen[0]?.method).toBe('server/discover');
    expect(eras.kept.get('modern')).toMatchObject({ discover: { supportedVersions: ['2026-07-28'] } });
  });

  it('sends the standard headers, and Mcp-Param-* from the pinned schema only', async () => {
    const { server, upstream } = await started();
    await upstream.callTool('echo', { region: 'eu\r\nX-Evil: 1', text: 'hi' }, { inputSchema: ECHO_SCHEMA });
    const call = server.seen.find((s) => s.method === 'tools/call')!;
    expect(call.headers).toMatchObject({
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'echo',
      'mcp-param-region': `=?base64?${Buffer.from('eu\r\nX-Evil: 1').toString('base64')}?=`,
    });
    expect(call.headers['x-evil']).toBeUndefined();

    // The live listing declares the header too, but without a pinned schema none is sent.
    await upstream.callTool('echo', { region: 'eu-1' }).catch(() => {});
    const unpinned = server.seen.filter((s) => s.method === 'tools/call')[1]!;
    expect(unpinned.headers['mcp-param-region']).toBeUndefined();
  });

  it('a cancelled call closes its stream, and the server sees it', async () => {
    const { server, upstream } = await started();
    const abort = new AbortController();
    const call = upstream.callTool('wait', {}, { signal: abort.signal });
    await until(() => server.seen.some((s) => s.method === 'tools/call'));
    abort.abort();
    await expect(call).rejects.toMatchObject({ code: 'CALL_CANCELLED' });
    await until(() => server.cancelled.length === 1);
    // 2026 over HTTP cancels by closing the stream: no notifications/cancelled is posted.
    expect(server.seen.map((s) => s.method)).not.toContain('notifications/cancelled');
  });

  it('a list change reaches the gateway through the listen stream', async () => {
    const { server, upstream } = await started();
    let changes = 0;
    upstream.onListChanged(() => changes++);
    server.changeTools([{ name: 'echo', description: 'Now does something else.', inputSchema: ECHO_SCHEMA }]);
    await until(() => changes === 1, 8_000);
    const { tools } = await upstream.listTools();
    expect(tools).toEqual([expect.objectContaining({ description: 'Now does something else.' })]);
  });

  it('the log level travels with each request (2026 has no logging/setLevel)', async () => {
    const { server, upstream } = await started();
    await upstream.setLoggingLevel('debug');
    await upstream.callTool('echo', {}, {});
    expect(server.seen.map((s) => s.method)).not.toContain('logging/setLevel');
    const call = server.seen.find((s) => s.method === 'tools/call')!;
    expect((call.body as { params: { _meta: Record<string, unknown> } }).params._meta).toMatchObject({
      'io.modelcontextprotocol/logLevel': 'debug',
    });
  });

  it('a resource subscription goes in the listen filter, and its updates come back', async () => {
    const { server, upstream } = await started();
    const updated: unknown[] = [];
    upstream.onResourceUpdated((uri) => updated.push(uri));
    await upstream.subscribeResource('test://a', true);
    expect(server.seen.map((s) => s.method)).not.toContain('resources/subscribe');
    const listens = server.seen.filter((s) => s.method === 'subscriptions/listen');
    expect((listens.at(-1)!.body as { params: { notifications?: unknown } }).params).toMatchObject({
      notifications: { resourceSubscriptions: ['test://a'] },
    });
    server.updated('test://b');
    server.updated('test://a');
    await until(() => updated.length > 0);
    expect(updated).toEqual(['test://a']);
  });

  it("the headers are the ones the SDK's own server checks: pinned ones pass, hostile values included", async () => {
    const server = await modernServer();
    const upstream = new RemoteUpstream({ name: 'strict', transport: 'http', url: server.strictUrl });
    opened.push({ upstream, server });
    await upstream.start();
    const hostile = { region: 'eu\r\nX-Evil: 1 ✓', text: 'hi' };
    const result = (await upstream.callTool('echo', hostile, { inputSchema: ECHO_SCHEMA })) as {
      content: { text: string }[];
    };
    expect(JSON.parse(result.content[0]!.text)).toEqual(hostile);
    // Without the pinned schema no Mcp-Param-Region goes, and this server refuses the call (-32020).
    await expect(upstream.callTool('echo', { region: 'eu-1' })).rejects.toThrow(
      /Mcp-Param-Region|-32020|header/i,
    );
  });
});
