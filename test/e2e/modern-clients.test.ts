// An MCP 2026-07-28 client (SDK v2, pinned to that revision) through `ringfence mcp serve`, over
// stdio and over --http, next to a 2025 client: served statelessly, decided by the same pipeline.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import { connectHttp, freshHome, serveHttp, startToolServer } from '../helpers/mcp.js';
import { stopAll } from '../helpers/processes.js';

const MODERN = '2026-07-28';
const TOKEN = 'e2e-token-0123456789abcdef0123456789abcdef';
const tools = [
  {
    name: 'echo',
    description: 'Echo.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
];

async function scenario() {
  const home = await freshHome();
  const dir = join(home, '..');
  await writeFile(join(dir, 'tools.json'), JSON.stringify(tools));
  await writeFile(join(dir, 'b.json'), '{}');
  const server = await startToolServer(join(dir, 'tools.json'), join(dir, 'b.json'));
  const added = await ringfence(['mcp', 'add', 'main', '--url', server.url], { RINGFENCE_HOME: home });
  expect(added.code, added.stderr).toBe(0);
  return { home };
}

const modernClient = () =>
  new Client(
    { name: 'e2e-2026-client', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: MODERN } } },
  );
const text = (result: unknown) => (result as { content: { text: string }[] }).content[0]!.text;

describe('a 2026 client through mcp serve', () => {
  let home: string;
  beforeAll(async () => {
    ({ home } = await scenario());
  });
  afterAll(async () => {
    await stopAll();
  });

  it('over stdio: discovers, lists, calls, and is refused a tool the gateway did not list', async () => {
    let stderr = '';
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [cliBin, 'mcp', 'serve'],
      env: { ...(process.env as Record<string, string>), RINGFENCE_HOME: home },
      stderr: 'pipe',
    });
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = modernClient();
    try {
      await client.connect(transport);
      expect(client.getProtocolEra(), stderr).toBe('modern');
      expect(client.getInstructions()).toMatch(/run in isolation by ringfence/);
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['main_echo']);
      expect(text(await client.callTool({ name: 'main_echo', arguments: { text: 'hi' } }))).toContain('hi');
      await expect(client.callTool({ name: 'main_nope', arguments: {} })).rejects.toThrow(
        /"main_nope" is not a tool this gateway listed/,
      );
    } finally {
      await client.close();
    }
  });

  it('over --http: served without a session next to a 2025 client, and header/body disagreement refused', async () => {
    const served = await serveHttp(home, TOKEN);
    const legacy = await connectHttp(served.url, TOKEN);
    const modern = modernClient();
    await modern.connect(
      new StreamableHTTPClientTransport(new URL(served.url), {
        requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
      }),
    );
    try {
      expect(modern.getProtocolEra()).toBe('modern');
      expect(modern.getInstructions()).toBe(legacy.getInstructions());
      expect(text(await modern.callTool({ name: 'main_echo', arguments: { text: 'a' } }))).toContain('a');
      expect(text(await legacy.callTool({ name: 'main_echo', arguments: { text: 'b' } }))).toContain('b');
      // A header naming another tool than the body does: refused at the door, nothing called.
      const mismatch = await fetch(served.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          'mcp-protocol-version': MODERN,
          'mcp-method': 'tools/call',
          'mcp-name': 'main_echo',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          method: 'tools/call',
          params: {
            name: 'main_other',
            arguments: {},
            _meta: {
              'io.modelcontextprotocol/protocolVersion': MODERN,
              'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
              'io.modelcontextprotocol/clientCapabilities': {},
            },
          },
        }),
      });
      expect(mismatch.status).toBe(400);
      expect(((await mismatch.json()) as { error: { code: number } }).error.code).toBe(-32020);
    } finally {
      await modern.close();
      await legacy.close();
      served.child.kill();
    }
  });
});
