// One token cannot take every 2026 `subscriptions/listen` stream the gateway serves: past its
// share it is refused (429), and another agent still gets its stream.
import { afterEach, describe, expect, it } from 'vitest';
import { EverythingUpstream, policyOf, startGateway } from './__fixtures__/methods-harness.js';
import { serveHttp } from './http.js';

const MODERN = '2026-07-28';
let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => {});
  cleanup = [];
});

describe('2026 subscriptions/listen streams per token', () => {
  it('are capped per token; another agent still listens', async () => {
    const { gateway, done } = await startGateway([new EverythingUpstream('s')], policyOf([]));
    const served = await serveHttp(gateway, {
      address: '127.0.0.1:0',
      sessions: { perToken: 2 },
      resolveToken: (t) =>
        t === 'alice-token' ? { agent: 'alice' } : t === 'bob-token' ? { agent: 'bob' } : undefined,
    });
    const aborts: AbortController[] = [];
    cleanup.push(
      done,
      () => gateway.close(),
      () => served.close(),
      async () => {
        for (const a of aborts) a.abort();
      },
    );
    const listen = async (token: string) => {
      const aborting = new AbortController();
      aborts.push(aborting);
      const answer = await fetch(served.url, {
        method: 'POST',
        signal: aborting.signal,
        headers: {
          authorization: `Bearer ${token}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'subscriptions/listen',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'subscriptions/listen',
          params: {
            notifications: { toolsListChanged: true },
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      return { answer, aborting };
    };
    const first = await listen('alice-token');
    await listen('alice-token');
    const third = await listen('alice-token');
    expect(third.answer.status).toBe(429);
    expect(await third.answer.text()).toMatch(/subscriptions\/listen streams open; close one/);
    const bob = await listen('bob-token');
    expect(bob.answer.status).toBe(200);
    expect(bob.answer.headers.get('content-type')).toMatch(/text\/event-stream/);
    // A stream closed gives its slot back.
    first.aborting.abort();
    let again = await listen('alice-token');
    for (let i = 0; i < 50 && again.answer.status === 429; i++) {
      await new Promise((r) => setTimeout(r, 20));
      again = await listen('alice-token');
    }
    expect(again.answer.status).toBe(200);
  });
});
