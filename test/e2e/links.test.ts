import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import { hostileLinksImage, removeTestContainers } from '../helpers/containers.js';
import { freshHome } from '../helpers/mcp.js';

/**
 * A contained server with no egress puts links and icons a client would open or fetch by itself
 * everywhere MCP lets it (test/fixtures/hostile-links-server.mjs). Through `mcp serve`, serving all
 * servers and with `--only`, what the client receives holds no such link: every URI is the
 * gateway's namespace (or, with --only, a plain `test:` one), every icon a data: image it draws
 * without a fetch. Checked on the raw messages, before the SDK client's schema strips anything.
 */

const NAMESPACE = 'ringfence:hostile/';
/** What --only may show bare (resource-uri.ts): a plain URI of a scheme nothing but a server resolves. */
const PLAIN_BARE = /^(?:test|example):[A-Za-z0-9\-._~:/?#@%&=+,;*{}]*$/;
const DRAWABLE_ICON = /^data:image\/(?:png|jpeg|gif|webp);base64,[A-Za-z0-9+/]*={0,2}$/;

interface Served {
  readonly client: Client;
  readonly raw: JSONRPCMessage[];
  stderr(): string;
  close(): Promise<void>;
}

async function serve(home: string, args: string[]): Promise<Served> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [cliBin, 'mcp', 'serve', ...args],
    env: { ...(process.env as Record<string, string>), RINGFENCE_HOME: home },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'e2e-links', version: '1.0.0' });
  await client.connect(transport);
  const raw: JSONRPCMessage[] = [];
  const deliver = transport.onmessage!;
  transport.onmessage = (message) => {
    raw.push(message);
    deliver(message);
  };
  return { client, raw, stderr: () => stderr, close: () => client.close() };
}

/** Every URI-bearing member and icon src in `value`, with the path it was found at. */
function links(value: unknown, path = '$', found: { path: string; key: string; value: unknown }[] = []) {
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) links(item, `${path}[${index}]`, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const [key, member] of Object.entries(value)) {
      if (key === 'uri' || key === 'uriTemplate' || key === 'src' || key === 'websiteUrl')
        found.push({ path: `${path}.${key}`, key, value: member });
      links(member, `${path}.${key}`, found);
    }
  }
  return found;
}

describe('links and icons a client would open itself never reach it (a contained server)', () => {
  let home: string;

  beforeAll(async () => {
    home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'hostile', '--image', await hostileLinksImage()], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
  });
  afterAll(async () => {
    await removeTestContainers();
  });

  for (const [mode, args, names] of [
    ['serving all servers', [], { links: 'hostile_links', brief: 'hostile_brief', prefix: 'hostile_' }],
    ['with --only', ['--only', 'hostile'], { links: 'links', brief: 'brief', prefix: '' }],
  ] as const) {
    it(`${mode}: only the namespace and drawable icons, in listings, results, prompts and reads`, async () => {
      const served = await serve(home, [...args]);
      try {
        const { client } = served;
        const { tools } = await client.listTools();
        expect(tools.map((t) => t.name).sort()).toEqual(
          ['agree', 'contradict', 'links'].map((n) => `${names.prefix}${n}`),
        );
        await client.listPrompts();
        const { resources } = await client.listResources();
        await client.listResourceTemplates();
        const called = await client.callTool({ name: names.links, arguments: {} });
        expect(called.isError).toBeFalsy();
        await client.getPrompt({ name: names.brief });
        // A link the server put in a result is read through the gateway, from that server.
        const web = `${NAMESPACE}https://attacker.example/pixel?d=SECRET-7f3a`;
        expect(resources.map((r) => r.uri)).toContain(web);
        const read = await client.readResource({ uri: web });
        expect(read.contents.map((c) => c.uri)).toEqual([web, web]);

        const found = served.raw.flatMap((message) => links(message));
        expect(found.length).toBeGreaterThan(100);
        for (const { path, key, value } of found) {
          const what = `${path} = ${JSON.stringify(value).slice(0, 120)}`;
          expect(typeof value, what).toBe('string');
          if (key === 'src') expect(value, what).toMatch(DRAWABLE_ICON);
          else if (key === 'websiteUrl') throw new Error(`a server's websiteUrl reached the client: ${what}`);
          else if (args.length === 0) expect((value as string).startsWith(NAMESPACE), what).toBe(true);
          else
            expect((value as string).startsWith(NAMESPACE) || PLAIN_BARE.test(value as string), what).toBe(
              true,
            );
        }
        // The server's own test: URIs: bare with --only, namespaced otherwise.
        expect(resources.map((r) => r.uri)).toContain(
          args.length === 0 ? `${NAMESPACE}test://own` : 'test://own',
        );
        await expect
          .poll(() => served.stderr())
          .toMatch(
            /ringfence: hostile: \d+ icon\(s\) or icon member\(s\) in its listings were not passed on: a client fetches an icon itself/,
          );
      } finally {
        await served.close();
      }
    });

    it(`${mode}: structuredContent without an output schema only when its text says the same`, async () => {
      const served = await serve(home, [...args]);
      try {
        const contradict = await served.client.callTool({ name: `${names.prefix}contradict`, arguments: {} });
        expect(contradict.structuredContent).toBeUndefined();
        expect(contradict.content).toEqual([{ type: 'text', text: '{"balance": 0, "approved": false}' }]);
        const agree = await served.client.callTool({ name: `${names.prefix}agree`, arguments: {} });
        expect(agree.structuredContent).toEqual({ approved: false, balance: 0 });
      } finally {
        await served.close();
      }
    });
  }

  it('counts what was dropped in the audit log', async () => {
    const entries = (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> });
    const results = entries.filter((e) => e.type === 'mcp.result');
    const linksResults = results.filter((e) => e.refs.tool === 'links');
    expect(linksResults.length).toBe(2);
    for (const entry of linksResults) expect(entry.refs.dropped as number).toBeGreaterThan(25 * 28);
    const contradicted = results.filter((e) => e.refs.tool === 'contradict');
    expect(contradicted.map((e) => e.refs.dropped)).toEqual([1, 1]);
  });
});
