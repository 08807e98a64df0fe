import { readFile } from 'node:fs/promises';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import {
  EverythingUpstream,
  everyReachDecided,
  policyOf,
  startGateway,
} from './__fixtures__/methods-harness.js';
import { CLIENT_METHODS } from './client-methods.js';
import { createEndpointServer } from './endpoint.js';
import { FORWARDED_METHODS } from './pipeline/index.js';

let cleanup: (() => Promise<void>) | undefined;
afterEach(async () => {
  await cleanup?.();
  cleanup = undefined;
});

/** An endpoint over a gateway whose one server offers everything, so every handler is registered. */
async function endpoint(rules: Parameters<typeof policyOf>[0] = []) {
  const s = new EverythingUpstream('s');
  const started = await startGateway([s], policyOf(rules));
  cleanup = started.done;
  const server = createEndpointServer(started.gateway, { agent: 'bot' });
  return { s, server, ...started };
}

/** The methods a Server (the SDK's Protocol) has handlers for: what a client can reach. */
function registered(server: object) {
  const handlers = server as {
    _requestHandlers: Map<string, unknown>;
    _notificationHandlers: Map<string, unknown>;
  };
  expect(handlers._requestHandlers, 'the SDK keeps its handlers where this test reads them').toBeInstanceOf(
    Map,
  );
  return {
    request: [...handlers._requestHandlers.keys()].sort(),
    notification: [...handlers._notificationHandlers.keys()].sort(),
  };
}

const named = (kind: 'request' | 'notification') =>
  Object.entries(CLIENT_METHODS)
    .filter(([, m]) => m.kind === kind)
    .map(([method]) => method)
    .sort();

describe('every client method has a decision in the table, and the docs show that table', () => {
  it('names each method the endpoint handles, and nothing it does not', async () => {
    const { server } = await endpoint();
    expect(registered(server)).toEqual({ request: named('request'), notification: named('notification') });
  });

  it('sends on to a server only through the pipeline, and every pipeline method is reached from some client method', () => {
    const reached = new Set(Object.values(CLIENT_METHODS).flatMap((m) => m.reaches));
    expect([...reached].sort()).toEqual(Object.keys(FORWARDED_METHODS).sort());
  });

  it('is the table docs/gateway.md shows, row for row', async () => {
    const docs = await readFile(new URL('../../../../docs/gateway.md', import.meta.url), 'utf8');
    const section =
      docs.split('## Every client request, and what reaches a server')[1]?.split('\n## ')[0] ?? '';
    const rows = [...section.matchAll(/^\| `([^`]+)` +\| (.+?) +\| (.+?) +\|$/gm)].map((m) => m.slice(1));
    expect(rows).toEqual(Object.entries(CLIENT_METHODS).map(([method, m]) => [method, m.route, m.checks]));
  });

  it('says "never" exactly for the methods that send nothing of their own to a server', () => {
    for (const [method, m] of Object.entries(CLIENT_METHODS)) {
      // A cancel goes upstream only for a request already decided, as part of it.
      if (method === 'notifications/cancelled' || method === 'tasks/cancel') continue;
      expect(m.route === 'never', method).toBe(m.reaches.length === 0);
    }
  });
});

describe('through the endpoint, under a policy denying the server', () => {
  it('refuses completions, subscriptions and log levels with JSON-RPC errors, audited, and reaches nothing', async () => {
    const { s, server, lines, verify } = await endpoint([
      { id: 'no-s', match: { server: 's' }, action: 'deny', reason: 's is off limits' },
    ]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 't', version: '1' });
    await client.connect(clientSide);
    await expect(
      client.complete({
        ref: { type: 'ref/prompt', name: 's_greet' },
        argument: { name: 'name', value: 'A' },
      }),
    ).rejects.toThrow(
      'ringfence refused the completion of s/prompt greet: s is off limits (policy rule "no-s").',
    );
    await expect(client.subscribeResource({ uri: 'ringfence:s/test://x' })).rejects.toThrow(
      'ringfence refused the subscription to s/resource test://x: s is off limits (policy rule "no-s").',
    );
    await client.unsubscribeResource({ uri: 'ringfence:s/test://x' });
    await client.setLoggingLevel('debug');
    await client.ping();
    await client.close();
    expect(s.reached).toEqual([]);
    const written = await lines();
    expect(written.map((l) => [l.agent, l.refs.method, l.refs.allowed])).toEqual([
      ['bot', 'completion/complete', false],
      ['bot', 'resources/subscribe', false],
      ['bot', 'logging/setLevel', false],
    ]);
    everyReachDecided(written, [s]);
    expect(await verify()).toMatchObject({ ok: true });
  });

  it('keeps updates from a session whose subscribe was refused, and its unsubscribe from ending another session’s', async () => {
    const s = new EverythingUpstream('s');
    const started = await startGateway(
      [s],
      policyOf([{ id: 'no-interns', match: { agent: 'intern' }, action: 'deny' }]),
    );
    cleanup = started.done;
    const connect = async (agent: string) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await createEndpointServer(started.gateway, { agent }).connect(serverSide);
      const client = new Client({ name: agent, version: '1' });
      const updates: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', (n) => {
        updates.push(n.params.uri);
      });
      await client.connect(clientSide);
      return { client, updates };
    };
    const lead = await connect('lead');
    const intern = await connect('intern');
    await lead.client.subscribeResource({ uri: 'ringfence:s/test://x' });
    await expect(intern.client.subscribeResource({ uri: 'ringfence:s/test://x' })).rejects.toThrow(
      /no-interns/,
    );
    await intern.client.unsubscribeResource({ uri: 'ringfence:s/test://x' });
    s.sendResourceUpdated('test://x');
    await lead.client.ping();
    await intern.client.ping();
    expect(lead.updates).toEqual(['ringfence:s/test://x']);
    expect(intern.updates).toEqual([]);
    expect(s.reached.map((r) => r.method)).toEqual(['resources/subscribe']);
    // The lead's session closing ends the server's subscription, decided for the lead.
    await lead.client.close();
    for (let i = 0; i < 50 && s.reached.length < 2; i++) await new Promise((r) => setTimeout(r, 20));
    await intern.client.close();
    expect(s.reached.map((r) => r.method)).toEqual(['resources/subscribe', 'resources/unsubscribe']);
    const written = await started.lines();
    expect(
      written.filter((l) => l.type === 'mcp.decision').map((l) => [l.agent, l.refs.method, l.refs.allowed]),
    ).toEqual([
      ['lead', 'resources/subscribe', true],
      ['intern', 'resources/subscribe', false],
      ['lead', 'resources/unsubscribe', true],
    ]);
    everyReachDecided(written, [s]);
  });
});
