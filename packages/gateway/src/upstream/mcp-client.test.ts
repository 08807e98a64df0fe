import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import type { CallProgress } from '../ports/upstream.js';
import { UpstreamClient } from './mcp-client.js';

type Handler = (
  request: { params: { name: string; _meta?: { progressToken?: string | number } } },
  extra: {
    signal: AbortSignal;
    sendNotification: (n: {
      method: 'notifications/progress';
      params: Record<string, unknown>;
    }) => Promise<void>;
  },
) => Promise<unknown>;

const opened: { client: UpstreamClient; server: Server }[] = [];
afterEach(async () => {
  for (const { client, server } of opened.splice(0)) {
    await client.close().catch(() => {});
    await server.close().catch(() => {});
  }
});

/** The gateway's client for `server`, linked to an in-process SDK server whose tools run `handler`. */
async function linked(handler: Handler, limits = DEFAULT_CALL_LIMITS) {
  const server = new Server({ name: 'fixture', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(CallToolRequestSchema, handler as never);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new UpstreamClient('fixture', undefined, limits);
  await client.connect(clientSide);
  opened.push({ client, server });
  return { client, server, serverSide };
}

const progressOf = (extra: Parameters<Handler>[1], token: string | number | undefined, progress: number) =>
  extra.sendNotification({
    method: 'notifications/progress',
    params: { progressToken: token!, progress, total: 3 },
  });

describe('UpstreamClient calls', () => {
  it('sends a token of its own upstream and hands the progress for it back', async () => {
    const tokens: unknown[] = [];
    const { client } = await linked(async (request, extra) => {
      const token = request.params._meta?.progressToken;
      tokens.push(token);
      for (let i = 1; i <= 3; i++) await progressOf(extra, token, i);
      return { content: [] };
    });
    const seen: CallProgress[] = [];
    await client.callTool('slow', {}, { onProgress: (p) => seen.push(p) });
    expect(tokens[0]).toMatch(/^rf-[0-9a-f]{32}$/);
    // All three at once, within the relay's burst, and before the answer.
    expect(seen).toEqual([1, 2, 3].map((progress) => ({ progress, total: 3 })));
    expect(client.inFlight).toBe(0);
  });

  it("drops a server's progress for tokens it was not given", async () => {
    let other: string | number | undefined;
    const { client } = await linked(async (request, extra) => {
      if (request.params.name === 'first') {
        other = request.params._meta?.progressToken;
        return { content: [] };
      }
      // Guesses (the SDK's own numbering, a finished call's token) and then nothing of its own.
      for (const forged of [0, 1, 2, 3, '1', 'rf-0', other]) await progressOf(extra, forged, 1);
      return { content: [] };
    });
    await client.callTool('first', {});
    const seen: CallProgress[] = [];
    await client.callTool('forger', {}, { onProgress: (p) => seen.push(p) });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(seen).toEqual([]);
  });

  it('cancels the upstream request when the caller cancels, and the server is told', async () => {
    let serverSawCancel = false;
    const { client } = await linked(
      (_request, extra) =>
        new Promise((resolve) => {
          extra.signal.addEventListener('abort', () => {
            serverSawCancel = true;
            resolve({ content: [] });
          });
        }),
    );
    const caller = new AbortController();
    const call = client.callTool('sleep', {}, { signal: caller.signal });
    await new Promise((resolve) => setTimeout(resolve, 50));
    caller.abort();
    await expect(call).rejects.toMatchObject({ code: 'CALL_CANCELLED' });
    await expect.poll(() => serverSawCancel).toBe(true);
  });

  it('times out without progress, cancels upstream, and says how to allow longer', async () => {
    let serverSawCancel = false;
    const { client } = await linked(
      (_request, extra) =>
        new Promise(() => {
          extra.signal.addEventListener('abort', () => {
            serverSawCancel = true;
          });
        }),
      { ...DEFAULT_CALL_LIMITS, idleMs: 300 },
    );
    await expect(client.callTool('sleep', {})).rejects.toMatchObject({
      code: 'CALL_TIMEOUT',
      message: expect.stringMatching(
        /^no answer and no progress from fixture for 0\.3 s, so the call was cancelled\. .*--call-timeout SECONDS\)$/,
      ),
    });
    await expect.poll(() => serverSawCancel).toBe(true);
  });

  it('a cap from outside (the policy) lowers the ceiling and is named as the reason', async () => {
    const { client } = await linked(() => new Promise(() => {}));
    await expect(
      client.callTool('sleep', {}, { cap: { ms: 200, source: 'the organisation policy (x)' } }),
    ).rejects.toMatchObject({
      code: 'CALL_CEILING',
      message: expect.stringContaining('the longest the organisation policy (x) allows'),
    });
  });

  it('fails the calls in flight at once when the connection closes', async () => {
    const { client, serverSide } = await linked(() => new Promise(() => {}));
    const calls = [client.callTool('a', {}), client.callTool('b', {})];
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(client.inFlight).toBe(2);
    await serverSide.close();
    for (const call of calls)
      await expect(call).rejects.toMatchObject({
        code: 'UPSTREAM_LOST',
        message: 'the connection to the server closed before it answered',
      });
    expect(client.inFlight).toBe(0);
  });

  it('an in-band -32000 answer (the HTTP transport\'s "its stream broke") is a lost connection too', async () => {
    const { client } = await linked(async () => {
      throw new McpError(-32000, 'the answer stream broke');
    });
    await expect(client.callTool('a', {})).rejects.toMatchObject({
      code: 'UPSTREAM_LOST',
      message: 'the connection to the server closed before it answered',
    });
  });

  it('any other server error is passed on as the server said it', async () => {
    const { client } = await linked(async () => {
      throw new McpError(-32001, 'busy');
    });
    await expect(client.callTool('a', {})).rejects.toMatchObject({
      code: -32001,
      message: expect.stringContaining('busy'),
    });
  });
});

describe('UpstreamClient roots', () => {
  it("answers a 2026 server's roots/list from the mounts, as a 2025 server's: file URIs, nothing else", () => {
    const client = new UpstreamClient('s', undefined, undefined, {
      grants: { sampling: false, elicitation: false },
      roots: () => [
        { target: '/workspace', readOnly: false },
        { target: '/data/ref docs', readOnly: true },
      ],
    });
    expect(client.roots()).toEqual({
      roots: [
        { uri: 'file:///workspace', name: '/workspace (writable)' },
        { uri: 'file:///data/ref%20docs', name: '/data/ref docs (read-only)' },
      ],
    });
  });
});
