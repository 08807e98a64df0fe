// A server's log line is not tied to any request: while two agents wait on the same server, a
// line may be about either one's arguments, so neither is given it (either era over --http).
import { afterEach, describe, expect, it } from 'vitest';
import { EverythingUpstream, policyOf, startGateway } from './__fixtures__/methods-harness.js';
import { serveHttp } from './http.js';

const MODERN = '2026-07-28';

/** `slow` answers only when released, so two calls can be in flight at once. */
class SlowServer extends EverythingUpstream {
  readonly calls: string[] = [];
  readonly gates: (() => void)[] = [];
  override async listTools() {
    return {
      tools: [{ name: 'slow', inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }],
      problems: [],
    };
  }
  override async callTool(name: string, args: Record<string, unknown>) {
    this.calls.push(String(args.text));
    await new Promise<void>((release) => this.gates.push(release));
    return { content: [{ type: 'text', text: `${name} done` }] };
  }
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => {});
  cleanup = [];
});

function call(url: string, token: string, text: string, logLevel?: string) {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 's_slow',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name: 's_slow',
        arguments: { text },
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
          ...(logLevel ? { 'io.modelcontextprotocol/logLevel': logLevel } : {}),
        },
      },
    }),
  });
}

describe('server log lines while several agents wait on one server', () => {
  it('are given to none of them (a line about alice’s call never reaches bob)', async () => {
    const s = new SlowServer('s');
    const { gateway, done } = await startGateway([s], policyOf([]));
    const served = await serveHttp(gateway, {
      address: '127.0.0.1:0',
      resolveToken: (t) =>
        t === 'alice-token' ? { agent: 'alice' } : t === 'bob-token' ? { agent: 'bob' } : undefined,
    });
    cleanup.push(
      done,
      () => gateway.close(),
      () => served.close(),
    );
    const waitFor = async (n: number) => {
      for (let i = 0; i < 200 && s.calls.length < n; i++) await new Promise((r) => setTimeout(r, 10));
      expect(s.calls).toHaveLength(n);
    };
    const alice = call(served.url, 'alice-token', 'alice-secret');
    await waitFor(1);
    const bob = call(served.url, 'bob-token', 'bob', 'debug');
    await waitFor(2);
    gateway.emit('log', {
      server: 's',
      params: { level: 'info', logger: 's', data: 'processing alice-secret' },
    });
    await new Promise((r) => setTimeout(r, 50));
    for (const release of s.gates) release();
    await (await alice).text();
    const seen = await (await bob).text();
    expect(seen).toMatch(/slow done/);
    expect(seen).not.toMatch(/alice-secret/);
  });
});
