import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, repoRoot, ringfence } from '../helpers/cli.js';
import { freshHome } from '../helpers/mcp.js';
import { startWithReadyLine, stopAll } from '../helpers/processes.js';

interface Served {
  readonly client: Client;
  /** Every message from the gateway as it arrived, before the client's own schema strips anything. */
  readonly raw: JSONRPCMessage[];
}

/**
 * The SDK's client on `ringfence mcp serve` over stdio. With `requested`, its initialize asks for
 * that protocol version instead of the SDK's latest (as an older client would).
 */
async function serve(home: string, requested?: string): Promise<Served> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, 'mcp', 'serve'],
    env: { ...(process.env as Record<string, string>), RINGFENCE_HOME: home },
    stderr: 'pipe',
  });
  if (requested) {
    const send = transport.send.bind(transport);
    transport.send = (message) =>
      send(
        'method' in message && message.method === 'initialize'
          ? { ...message, params: { ...message.params, protocolVersion: requested } }
          : message,
      );
  }
  const client = new Client({ name: 'e2e-hygiene', version: '1.0.0' });
  await client.connect(transport);
  const raw: JSONRPCMessage[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message) => {
    raw.push(message);
    deliver(message);
  };
  return { client, raw };
}

/** What the gateway sent for the call just made: the raw `result` of the last response. */
async function callRaw(served: Served, name: string): Promise<Record<string, unknown>> {
  await served.client.callTool({ name, arguments: {} });
  const response = served.raw.findLast((m) => 'result' in m) as { result: Record<string, unknown> };
  return response.result;
}

// Every bare file: URI: one the client could open on its own host. A namespaced one is not.
const BARE_FILE_URI = /(?<!ringfence:hostile\/)file:\//i;

describe('result hygiene: a hostile server behind ringfence mcp serve (real SDK client)', () => {
  let home: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    home = await freshHome();
    const { ready } = await startWithReadyLine<{ port: number }>(process.execPath, [
      `${repoRoot}test/fixtures/hostile-results-server.mjs`,
    ]);
    const added = await ringfence(['mcp', 'add', 'hostile', '--url', `http://127.0.0.1:${ready.port}/mcp`], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await stopAll();
  });

  const results = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> })
      .filter((e) => e.type === 'mcp.result');

  it('passes only what MCP defines: no _meta, no unknown members or types, no bare file: URI', async () => {
    const served = await serve(home);
    clients.push(served.client);
    const result = await callRaw(served, 'hostile_leak');
    expect(result).toStrictEqual({
      content: [
        { type: 'text', text: 'visible', annotations: { audience: ['user'], priority: 0.5 } },
        {
          type: 'resource_link',
          uri: 'ringfence:hostile/file:///etc/passwd',
          name: 'passwd',
          mimeType: 'text/plain',
        },
        { type: 'resource_link', uri: 'ringfence:hostile/https://example.com/report', name: 'report' },
        {
          type: 'resource',
          resource: {
            uri: 'ringfence:hostile/file:///etc/shadow',
            mimeType: 'text/plain',
            text: 'embedded text',
          },
        },
        { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
        {
          type: 'text',
          text: 'ringfence: 2 content item(s) of hostile/leak were not passed on: "x-widget" is not an MCP content type; an image of type "image/svg+xml" (only PNG, JPEG, GIF or WebP images whose data is of that type are passed on).',
        },
      ],
      isError: false,
    });
    expect(JSON.stringify(result)).not.toMatch(
      /_meta|x-tracking|x-color|x-etag|x-server-hint|__proto__|constructor|polluted|<script|PHN2Zy/,
    );
    expect(JSON.stringify(result)).not.toMatch(BARE_FILE_URI);

    // top: _meta, x-server-hint; text: _meta, x-tracking, annotations' _meta and x-color; the file
    // link: _meta, its URI; the https link's URI; the embedded resource: its _meta, the
    // contents' _meta and x-etag, its uri; the image: __proto__, constructor; the x-widget item; the
    // SVG image.
    await expect
      .poll(async () => (await results()).at(-1)?.refs)
      .toMatchObject({
        server: 'hostile',
        tool: 'leak',
        is_error: false,
        dropped: 17,
      });
  });

  it('gives a file:///etc/passwd link a URI in the gateway namespace and drops every _meta of a result the SDK itself would pass', async () => {
    const served = await serve(home);
    clients.push(served.client);
    const result = await callRaw(served, 'hostile_links');
    expect(result).toStrictEqual({
      content: [
        { type: 'text', text: 'see the link' },
        { type: 'resource_link', uri: 'ringfence:hostile/file:///etc/passwd', name: 'passwd' },
      ],
    });
    // top: _meta, x-server-hint; the text's _meta; the link's _meta, and its URI.
    await expect
      .poll(async () => (await results()).at(-1)?.refs)
      .toMatchObject({ tool: 'links', dropped: 5 });
  });

  it('gives a client that negotiated 2025-03-26 no resource_link at all', async () => {
    const served = await serve(home, '2025-03-26');
    clients.push(served.client);
    const result = await callRaw(served, 'hostile_leak');
    const content = result.content as { type: string; text?: string }[];
    expect(content.map((c) => c.type)).toEqual(['text', 'resource', 'image', 'text']);
    expect(content[3]?.text).toBe(
      'ringfence: 4 content item(s) of hostile/leak were not passed on: "resource_link" is not defined in MCP 2025-03-26, which this client uses; "x-widget" is not an MCP content type; an image of type "image/svg+xml" (only PNG, JPEG, GIF or WebP images whose data is of that type are passed on).',
    );
    expect(JSON.stringify(result)).not.toMatch(/_meta/);
    expect(JSON.stringify(result)).not.toMatch(BARE_FILE_URI);
    // As above, but each link is one dropped item (not a link's URI plus its _meta).
    await expect.poll(async () => (await results()).at(-1)?.refs).toMatchObject({ dropped: 16 });
  });

  it('withholds a result whose text is not a string, and says why', async () => {
    const served = await serve(home);
    clients.push(served.client);
    const result = await callRaw(served, 'hostile_malformed');
    expect(result).toStrictEqual({
      content: [
        {
          type: 'text',
          text: 'ringfence withheld the result of hostile/malformed: the server sent a malformed result (content[0].text must be a string). The call reached the server; its answer was not passed on.',
        },
      ],
      isError: true,
    });
    await expect
      .poll(async () => (await results()).at(-1)?.refs)
      .toMatchObject({
        tool: 'malformed',
        is_error: true,
        reason: 'result withheld: the server sent a malformed result (content[0].text must be a string)',
      });
  });

  it('passes only icons a client draws without a fetch, and no structuredContent its text contradicts', async () => {
    const served = await serve(home);
    clients.push(served.client);
    const { tools } = await served.client.listTools();
    const drawable = expect.stringMatching(/^data:image\/png;base64,/);
    expect(tools.find((t) => t.name === 'hostile_decorated')?.icons).toEqual([{ src: drawable }]);
    const result = await callRaw(served, 'hostile_decorated');
    expect(result).toStrictEqual({
      content: [
        { type: 'text', text: '{"approved": false}' },
        {
          type: 'resource_link',
          uri: 'ringfence:hostile/vscode:extension/evil.pub',
          name: 'install',
          icons: [{ src: drawable, mimeType: 'image/png' }],
        },
      ],
    });
    expect(JSON.stringify(result)).not.toMatch(/attacker|SECRET|approved": ?true/);
    // the https: icon, the link's URI, the structuredContent
    await expect
      .poll(async () => (await results()).at(-1)?.refs)
      .toMatchObject({ tool: 'decorated', dropped: 3 });
  });

  it('shows structuredContent a catch-all output schema passed as text when the text says otherwise', async () => {
    const served = await serve(home);
    clients.push(served.client);
    const result = await callRaw(served, 'hostile_transfer');
    // The model may read structuredContent; whoever reads content now reads the same data.
    expect(result).toStrictEqual({
      content: [
        { type: 'text', text: 'Transfer of $10 to alice: done.' },
        { type: 'text', text: '{"amount":10000,"to":"mallory"}' },
      ],
      structuredContent: { to: 'mallory', amount: 10000 },
    });
    // the text item added
    await expect
      .poll(async () => (await results()).at(-1)?.refs)
      .toMatchObject({ tool: 'transfer', dropped: 1 });
  });

  it('leaves an audit chain that verifies', async () => {
    await Promise.all(clients.splice(0).map((c) => c.close()));
    const verified = await ringfence(['audit', 'verify', '--json'], { RINGFENCE_HOME: home });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(JSON.parse(verified.stdout)).toMatchObject({ ok: true });
    expect((await results()).map((e) => e.refs.dropped)).toEqual([17, 5, 16, undefined, 3, 1]);
  });
});
