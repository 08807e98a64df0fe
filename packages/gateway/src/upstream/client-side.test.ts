// What the gateway's upstream client declares to a server and answers it: roots are the server's
// mounts as it sees them, sampling and elicitation declared only when granted and handed to the
// gateway either way (so an undeclared request is still refused with why, and audited).
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CreateMessageResultSchema, ListRootsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { MountedFolder, ServerRequest } from '../ports/upstream.js';
import { type ClientSide, grantsOf, UpstreamClient } from './mcp-client.js';

const opened: { client: UpstreamClient; server: Server }[] = [];
afterEach(async () => {
  for (const { client, server } of opened.splice(0)) {
    await client.close().catch(() => {});
    await server.close().catch(() => {});
  }
});

async function linked(side: ClientSide) {
  const server = new Server({ name: 'fixture', version: '1' }, { capabilities: {} });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await server.connect(serverSide);
  const client = new UpstreamClient('fixture', undefined, undefined, side);
  await client.connect(clientSide);
  opened.push({ client, server });
  return { client, server };
}

const MOUNTS: MountedFolder[] = [
  { target: '/workspace/docs', readOnly: true },
  { target: '/workspace/out dir', readOnly: false },
];

describe('UpstreamClient, the client side', () => {
  it('answers roots/list with the mounts as the server sees them, and nothing for a server without', async () => {
    const { server } = await linked({ grants: grantsOf({}), roots: () => MOUNTS });
    expect(server.getClientCapabilities()?.roots).toBeDefined();
    expect(await server.request({ method: 'roots/list' }, ListRootsResultSchema)).toEqual({
      roots: [
        { uri: 'file:///workspace/docs', name: '/workspace/docs (read-only)' },
        { uri: 'file:///workspace/out%20dir', name: '/workspace/out dir (writable)' },
      ],
    });
    const bare = await linked({ grants: grantsOf({}), roots: () => [] });
    expect(await bare.server.listRoots()).toEqual({ roots: [] });
  });

  it('declares sampling and elicitation only when granted', async () => {
    const none = await linked({ grants: grantsOf({}), roots: () => [] });
    expect(none.server.getClientCapabilities()).toEqual({ roots: {} });
    const both = await linked({
      grants: grantsOf({ allow_sampling: true, allow_elicitation: true }),
      roots: () => [],
    });
    expect(both.server.getClientCapabilities()).toEqual({
      roots: {},
      sampling: {},
      elicitation: { form: {} },
    });
  });

  it('hands a sampling request to the gateway even when not declared, and returns its refusal to the server', async () => {
    const { client, server } = await linked({ grants: grantsOf({}), roots: () => [] });
    const handed: ServerRequest[] = [];
    client.onServerRequest(async (request) => {
      handed.push(request);
      throw Object.assign(new Error('ringfence refused sampling/createMessage from fixture: no'), {
        code: -32600,
      });
    });
    const params = { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 };
    await expect(
      server.request({ method: 'sampling/createMessage', params }, CreateMessageResultSchema),
    ).rejects.toMatchObject({ code: -32600, message: expect.stringContaining('ringfence refused sampling') });
    expect(handed.map((r) => [r.method, r.params])).toEqual([['sampling/createMessage', params]]);
  });

  it('refuses anything else a server asks', async () => {
    const { server } = await linked({ grants: grantsOf({}), roots: () => [] });
    await expect(
      server.request({ method: 'tasks/list' } as never, ListRootsResultSchema),
    ).rejects.toMatchObject({ code: -32601 });
  });
});
