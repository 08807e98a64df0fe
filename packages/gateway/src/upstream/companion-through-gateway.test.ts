// Through the real Gateway and endpoint (in memory) to a real both-eras server on loopback: two
// 2025 sessions call the same tool at once, the server asks each mid-call on its call's own
// stream, and each session is asked its own question only (never the other's), audited as allowed.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, expect, it } from 'vitest';
import type { AuditInput } from '../audit/types.js';
import type { HttpServerConfig } from '../config/servers.js';
import { PinStore } from '../pins/store.js';
import type { SchemaChecks } from '../ports/schema.js';
import { createEndpointServer } from '../serve/endpoint.js';
import { Gateway } from '../serve/gateway.js';
import { dualEraServer } from './__fixtures__/dual-era-server.js';
import { RemoteUpstream } from './remote.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
});

it('two 2025 sessions at once: each is asked its own call’s question, never the other’s', async () => {
  const home = await mkdtemp(join(tmpdir(), 'rf-companion-'));
  cleanup.push(() => rm(home, { recursive: true, force: true }));
  const server = await dualEraServer();
  cleanup.push(() => server.close());
  const config: HttpServerConfig = {
    name: 'both',
    transport: 'http',
    url: server.url,
    allow_elicitation: true,
  };
  const audited: AuditInput[] = [];
  const gateway = new Gateway({
    servers: [config],
    pins: new PinStore(home),
    guard,
    audit: {
      append: async (input) => {
        audited.push(input);
        return audited.length;
      },
    },
    createUpstream: (entry) => new RemoteUpstream(entry as HttpServerConfig),
    log: () => {},
    session: 'test',
  });
  await gateway.start();
  cleanup.push(() => gateway.close());
  const session = async (who: string) => {
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await createEndpointServer(gateway, { agent: who }).connect(serverSide);
    const client = new Client({ name: who, version: '1.0.0' }, { capabilities: { elicitation: {} } });
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      asked.push(String((request.params as { message: string }).message));
      return { action: 'accept', content: {} };
    });
    await client.connect(clientSide);
    cleanup.push(() => client.close());
    return { client, asked };
  };
  const alice = await session('alice');
  const bob = await session('bob');
  const gate = server.hold();
  const a = alice.client.callTool({ name: 'both_ask', arguments: { label: 'for alice' } });
  const b = bob.client.callTool({ name: 'both_ask', arguments: { label: 'for bob' } });
  await expect.poll(() => server.seen.filter((s) => s.method === 'tools/call').length).toBe(2);
  gate.open();
  const [ra, rb] = await Promise.all([a, b]);
  expect(ra.isError, JSON.stringify(ra)).toBeFalsy();
  expect(rb.isError, JSON.stringify(rb)).toBeFalsy();
  expect(alice.asked).toHaveLength(1);
  expect(alice.asked[0]).toContain('for alice');
  expect(bob.asked).toHaveLength(1);
  expect(bob.asked[0]).toContain('for bob');
  // Both calls went over one 2025 session; both requests audited as allowed, each to its agent.
  expect(server.seen.filter((s) => s.method === 'tools/call').map((s) => s.era)).toEqual([
    'legacy',
    'legacy',
  ]);
  const requests = audited.filter((e) => e.type === 'mcp.server_request');
  expect(requests.map((e) => [e.refs.rule, e.agent]).sort()).toEqual([
    ['allowed', 'alice'],
    ['allowed', 'bob'],
  ]);
});
