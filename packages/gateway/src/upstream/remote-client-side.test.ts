// A remote server, over real streamable HTTP on loopback: it has no mounts, so its roots are an
// empty list, and it is told it may sample or elicit only when its entry (capped by the policy) says so.
import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  CallToolRequestSchema,
  ListRootsResultSchema,
  ListToolsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { HttpClientTransport } from './http-transport.js';
import { UpstreamClient } from './mcp-client.js';
import { RemoteUpstream } from './remote.js';

const opened: { http: HttpServer; upstream: RemoteUpstream }[] = [];
afterEach(async () => {
  for (const { http, upstream } of opened.splice(0)) {
    await upstream.close();
    http.closeAllConnections();
    await new Promise((resolve) => http.close(resolve));
  }
});

/** An SDK server (one session) whose one tool reports the roots and capabilities its client gave it. */
async function remote(entry: Partial<HttpServerConfig> = {}) {
  const server = new Server({ name: 'remote', version: '1' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [] }));
  server.setRequestHandler(CallToolRequestSchema, async (_request, extra) => {
    const roots = await extra.sendRequest({ method: 'roots/list' }, ListRootsResultSchema);
    const text = JSON.stringify({ roots, capabilities: server.getClientCapabilities() });
    return { content: [{ type: 'text', text }] };
  });
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
  await server.connect(transport);
  const http = createServer((request, response) => void transport.handleRequest(request, response));
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  const upstream = new RemoteUpstream({
    name: 'remote',
    transport: 'http',
    url: `http://127.0.0.1:${port}/mcp`,
    ...entry,
  });
  opened.push({ http, upstream });
  await upstream.start();
  expect(upstream.era()).toBe('legacy');
  const result = (await upstream.callTool('report', {})) as { content: { text: string }[] };
  return JSON.parse(result.content[0]!.text) as { roots: unknown; capabilities: unknown };
}

describe('RemoteUpstream, the client side', () => {
  it('a 2025 server refusing the era probe with HTTP 400 is 2025 on the first connect, not unreachable', async () => {
    // The probe reads only an SdkHttpError { status, statusText, text } as the server's answer;
    // any other rejection is a network failure to it, and the connect would fail.
    const server = new Server({ name: 'remote', version: '1' }, { capabilities: { tools: {} } });
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID() });
    await server.connect(transport);
    const http = createServer((request, response) => void transport.handleRequest(request, response));
    await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
    const url = new URL(`http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`);
    const client = new UpstreamClient('remote');
    try {
      await client.connect(new HttpClientTransport(url, { maxAnswerBytes: 1 << 20 }));
      expect(client.era()).toBe('legacy');
    } finally {
      await client.close();
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    }
  });

  it('answers roots/list with an empty list and declares nothing but roots by default', async () => {
    expect(await remote()).toEqual({ roots: { roots: [] }, capabilities: { roots: {} } });
  });

  it('declares sampling and elicitation when its entry allows them', async () => {
    const { capabilities } = await remote({ allow_sampling: true, allow_elicitation: true });
    expect(capabilities).toEqual({ roots: {}, sampling: {}, elicitation: { form: {} } });
  });
});
