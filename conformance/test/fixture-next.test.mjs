// The v2 fixture (fixtures/next/) through the SDK v2 client, in both eras and over both
// transports. The suite reaches servers by URL only, so this is where the fixture's stdio leg is
// proved: the same features, a 2025 session and a 2026 connection (input_required answered by the
// client's own handlers, sealed requestState across rounds).
import { request as httpRequest } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { serveHttp } from '../fixtures/next/http.mjs';

const ENTRY = fileURLToPath(new URL('../fixtures/next/server.mjs', import.meta.url));
const ERAS = /** @type {const} */ ({
  legacy: { mode: 'legacy', version: '2025-11-25' },
  modern: { mode: { pin: '2026-07-28' }, version: '2026-07-28' },
});

let fixture;
const clients = [];
beforeAll(async () => {
  fixture = await serveHttp();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close().catch(() => {})));
});
afterAll(async () => {
  await fixture.close();
});

/** A client in `era` over `transport`, answering elicitation with a name and colour. */
async function connect(era, transport) {
  const client = new Client(
    { name: 'fixture-next-test', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: ERAS[era].mode } },
  );
  client.setRequestHandler('elicitation/create', async () => ({
    action: 'accept',
    content: { name: 'Ada', color: 'green', ok: true },
  }));
  await client.connect(
    transport === 'http'
      ? new StreamableHTTPClientTransport(new URL(fixture.url))
      : new StdioClientTransport({ command: process.execPath, args: [ENTRY, '--stdio'] }),
  );
  clients.push(client);
  return client;
}

const firstText = (result) => result.content.find((c) => c.type === 'text')?.text;

describe.each(['http', 'stdio'])('over %s', (transport) => {
  it.each(Object.keys(ERAS))('serves the %s era with the same tools', async (era) => {
    const client = await connect(era, transport);
    expect(client.getNegotiatedProtocolVersion()).toBe(ERAS[era].version);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'test_simple_text',
        'test_input_required_result_multi_round',
        'test_missing_capability',
      ]),
    );
    const result = await client.callTool({ name: 'test_simple_text', arguments: {} });
    expect(firstText(result)).toBe('This is a simple text response for testing.');
  });

  it.each(Object.keys(ERAS))(
    'takes a %s client through two elicitation rounds (input_required on 2026, pushed requests on 2025)',
    async (era) => {
      const client = await connect(era, transport);
      const result = await client.callTool({ name: 'test_input_required_result_multi_round', arguments: {} });
      expect(firstText(result)).toBe('Multi-round complete: Ada likes green');
    },
  );
});

describe('HTTP', () => {
  it('refuses a Host that names neither loopback nor the listening host (DNS rebinding), in both eras', async () => {
    for (const body of [
      { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      { jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} },
    ]) {
      // node:http, not fetch: fetch does not let a caller set Host.
      const status = await new Promise((resolve, reject) => {
        const request = httpRequest(fixture.url, {
          method: 'POST',
          headers: {
            host: 'evil.example.com',
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
          },
        });
        request.once('response', (response) => {
          response.resume();
          resolve(response.statusCode);
        });
        request.once('error', reject);
        request.end(JSON.stringify(body));
      });
      expect(status).toBe(403);
    }
  });

  it('refuses a requestState that was not sealed by the fixture, before the tool runs', async () => {
    const client = await connect('modern', 'http');
    await expect(
      client.request({
        method: 'tools/call',
        params: {
          name: 'test_input_required_result_request_state',
          arguments: {},
          inputResponses: { confirm: { action: 'accept', content: { ok: true } } },
          requestState: 'eyJ0b29sIjoicmVxdWVzdF9zdGF0ZSJ9',
        },
      }),
    ).rejects.toMatchObject({ code: -32602 });
  });
});
