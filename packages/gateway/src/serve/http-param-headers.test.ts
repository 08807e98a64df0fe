// A 2026 tools/call's Mcp-Param-* headers must agree with its body, as the tool's pinned
// inputSchema declares them (x-mcp-header): a disagreement never reaches the server.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { EverythingUpstream, policyOf, startGateway } from './__fixtures__/methods-harness.js';
import { serveHttp } from './http.js';

const MODERN = '2026-07-28';

class RegionServer extends EverythingUpstream {
  readonly calls: unknown[] = [];
  override async listTools() {
    return {
      tools: [
        {
          name: 'region',
          inputSchema: {
            type: 'object',
            properties: {
              region: { type: 'string', 'x-mcp-header': 'Region' },
              count: { type: 'integer', 'x-mcp-header': 'Count' },
            },
          },
        },
      ],
      problems: [],
    };
  }
  override async callTool(_name: string, args: Record<string, unknown>) {
    this.calls.push(args);
    return { content: [{ type: 'text', text: `ran ${JSON.stringify(args)}` }] };
  }
}

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => {});
  cleanup = [];
});

async function start() {
  const s = new RegionServer('s');
  const { gateway, done } = await startGateway([s], policyOf([]));
  const served = await serveHttp(gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) => (t === 'alice-token' ? { agent: 'alice' } : undefined),
  });
  cleanup.push(
    done,
    () => gateway.close(),
    () => served.close(),
  );
  return { s, url: served.url };
}

function call(url: string, args: Record<string, unknown>, headers: Record<string, string>) {
  return fetch(url, {
    method: 'POST',
    headers: {
      authorization: 'Bearer alice-token',
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': MODERN,
      'mcp-method': 'tools/call',
      'mcp-name': 's_region',
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: {
        name: 's_region',
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': MODERN,
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': {},
        },
      },
    }),
  });
}

describe('Mcp-Param-* on a 2026 tools/call', () => {
  it('are refused when they disagree with the body or are missing, before the server is reached', async () => {
    const { s, url } = await start();
    for (const [args, headers] of [
      [{ region: 'us-evil' }, { 'mcp-param-region': 'eu-safe' }],
      [{ region: 'us-evil' }, {}],
      [{ region: 'eu' }, { 'mcp-param-region': '=?base64?not base64?=' }],
      [
        { region: 'eu', count: 5 },
        { 'mcp-param-region': 'eu', 'mcp-param-count': '6' },
      ],
    ] as [Record<string, unknown>, Record<string, string>][]) {
      const answer = await call(url, args, headers);
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as { id: unknown; error: { code: number; message: string } };
      expect(body.id).toBe(3);
      expect(body.error.code).toBe(-32020);
      expect(body.error.message).toMatch(/mcp-param-(region|count)/);
    }
    expect(s.calls).toEqual([]);
  });

  it('pass when they agree, plain or Base64, and a compliant SDK client is served', async () => {
    const { s, url } = await start();
    const plain = await call(
      url,
      { region: 'eu', count: 5 },
      { 'mcp-param-region': 'eu', 'mcp-param-count': '5' },
    );
    expect(plain.status).toBe(200);
    const encoded = `=?base64?${Buffer.from('zürich').toString('base64')}?=`;
    const b64 = await call(url, { region: 'zürich' }, { 'mcp-param-region': encoded });
    expect(b64.status).toBe(200);
    const client = new Client(
      { name: 'sdk', version: '1' },
      { versionNegotiation: { mode: { pin: MODERN } } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: 'Bearer alice-token' } },
      }),
    );
    cleanup.push(() => client.close());
    await client.listTools();
    const result = (await client.callTool({ name: 's_region', arguments: { region: 'ap', count: 2 } })) as {
      content: { text: string }[];
    };
    expect(result.content[0]!.text).toMatch(/ran/);
    expect(s.calls).toHaveLength(3);
  });
});
