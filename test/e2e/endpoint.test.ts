import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import {
  connectHttp,
  connectStdio,
  firstText,
  freePort,
  freshHome,
  type ServedClient,
  startToolServer,
} from '../helpers/mcp.js';
import { stopAll, track } from '../helpers/processes.js';

const TOKEN = 'e2e-token-0123456789abcdef0123456789abcdef';
const tools = [
  {
    name: 'echo',
    description: 'Echo.',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  },
  {
    name: 'weather',
    description: 'Weather.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] },
  },
  {
    name: 'liar',
    description: 'Breaks its output schema.',
    inputSchema: { type: 'object' },
    outputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] },
  },
  { name: 'garbage', description: 'Returns garbage.', inputSchema: { type: 'object' } },
  { name: 'die', description: 'Exits mid-call.', inputSchema: { type: 'object' } },
  { name: 'huge', description: 'Answers 20 MB.', inputSchema: { type: 'object' } },
  { name: 'loud', description: 'Fails with a 2 MB message.', inputSchema: { type: 'object' } },
];
const behaviours = {
  weather: { reply: { content: [{ type: 'text', text: '21' }], structuredContent: { celsius: 21 } } },
  liar: { reply: { content: [{ type: 'text', text: 'n=ten' }], structuredContent: { n: 'ten' } } },
  garbage: { raw: { content: 'not an array', isError: 'maybe' } },
  die: { exit: true },
  huge: { rawTextBytes: 20 * 1024 * 1024 },
  loud: { throwRepeat: { text: 'secret-argument-echo ', times: 100_000 } },
};

async function scenario() {
  const home = await freshHome();
  const dir = join(home, '..');
  await writeFile(join(dir, 'tools.json'), JSON.stringify(tools));
  await writeFile(join(dir, 'b.json'), JSON.stringify(behaviours));
  await writeFile(join(dir, 'tools2.json'), JSON.stringify([tools[0]]));
  await writeFile(join(dir, 'b2.json'), '{}');
  const main = await startToolServer(join(dir, 'tools.json'), join(dir, 'b.json'));
  const other = await startToolServer(join(dir, 'tools2.json'), join(dir, 'b2.json'));
  for (const [name, url] of [
    ['main', main.url],
    ['other', other.url],
  ] as const) {
    const added = await ringfence(['mcp', 'add', name, '--url', url], { RINGFENCE_HOME: home });
    expect(added.code, added.stderr).toBe(0);
  }
  return { home, dir, main, other };
}

describe('the served endpoint over stdio: results, failures and other servers', () => {
  let served: ServedClient;
  let setup: Awaited<ReturnType<typeof scenario>>;
  beforeAll(async () => {
    setup = await scenario();
    served = await connectStdio(setup.home);
  });
  afterAll(async () => {
    await served?.close();
    await stopAll();
  });

  it('passes structured content that matches the pinned output schema', async () => {
    const result = await served.client.callTool({ name: 'main_weather', arguments: {} });
    expect(result.structuredContent).toEqual({ celsius: 21 });
  });

  it('replaces a result that breaks its output schema with a clear message', async () => {
    const result = await served.client.callTool({ name: 'main_liar', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(firstText(result)).toMatch(
      /withheld the result of main\/liar: it does not match the tool's pinned output schema/,
    );
  });

  it('replaces garbage from the upstream', async () => {
    const result = await served.client.callTool({ name: 'main_garbage', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/withheld the result of main\/garbage: the server sent a malformed/);
  });

  it('an answer over the per-request cap is cut off before it is buffered whole', async () => {
    const result = await served.client.callTool({ name: 'main_huge', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(/main\/huge failed upstream: .*exceeded 16777216 bytes/);
  });

  it("an upstream's error text reaches the model capped, and the audit log keeps only its digest", async () => {
    const result = await served.client.callTool({ name: 'main_loud', arguments: {} });
    expect(result.isError).toBe(true);
    expect(firstText(result).length).toBeLessThan(600);
    expect(firstText(result)).toMatch(/\(2100000 characters\)|characters\)/);
    const log = await readFile(join(setup.home, 'audit.jsonl'), 'utf8');
    expect(log).not.toContain('secret-argument-echo');
  });

  it('an upstream that dies mid-call: a clear error, and the gateway and other servers carry on', async () => {
    const died = await served.client.callTool({ name: 'main_die', arguments: {} });
    expect(died.isError).toBe(true);
    expect(firstText(died)).toMatch(
      /^ringfence: main\/die failed: the connection to the server dropped .*ringfence mcp ls --logs$/,
    );
    const other = await served.client.callTool({ name: 'other_echo', arguments: { text: 'still here' } });
    expect(firstText(other)).toContain('still here');
    const again = await served.client.callTool({ name: 'main_echo', arguments: { text: 'x' } });
    expect(again.isError).toBe(true);
  });
});

describe('the served endpoint over --http', () => {
  let setup: Awaited<ReturnType<typeof scenario>>;
  let url: string;
  beforeAll(async () => {
    setup = await scenario();
    const port = await freePort();
    const child = track(
      spawn(process.execPath, [cliBin, 'mcp', 'serve', '--http', `127.0.0.1:${port}`], {
        env: { ...process.env, RINGFENCE_HOME: setup.home, RINGFENCE_MCP_TOKEN: TOKEN },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      child.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('listening on')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    url = `http://127.0.0.1:${port}/mcp`;
  });
  afterAll(stopAll);

  const initialize = {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  };
  const post = (headers: Record<string, string>, body: unknown = initialize) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify(body),
    });

  it('serves a client with the right token', async () => {
    const client = await connectHttp(url, TOKEN);
    const { tools: listed } = await client.listTools();
    expect(listed.map((t) => t.name)).toContain('main_echo');
    const result = await client.callTool({ name: 'other_echo', arguments: { text: 'over http' } });
    expect(firstText(result)).toContain('over http');
    await client.close();
  });

  it.each([
    ['no token', {}],
    ['a wrong token', { authorization: `Bearer ${TOKEN}x` }],
    ['the token in the wrong header', { 'x-api-key': TOKEN }],
    ['the token without Bearer', { authorization: TOKEN }],
    ['a prefix of the token', { authorization: `Bearer ${TOKEN.slice(0, 10)}` }],
  ])('refuses %s with 401', async (_label, headers) => {
    const response = await post(headers);
    expect(response.status).toBe(401);
  });

  it('refuses a foreign Origin with 403 even with the right token', async () => {
    const response = await post({ authorization: `Bearer ${TOKEN}`, origin: 'http://evil.example' });
    expect(response.status).toBe(403);
  });

  it('refuses a rebinding Host with 403 even with the right token', async () => {
    // fetch will not send a forged Host; node:http will.
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(url, {
        method: 'POST',
        headers: {
          host: 'evil.example',
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on('error', reject);
      req.end(JSON.stringify(initialize));
    });
    expect(status).toBe(403);
  });

  it('will not let another token use an open session', async () => {
    const opened = await post({ authorization: `Bearer ${TOKEN}` });
    expect(opened.status).toBe(200);
    const session = opened.headers.get('mcp-session-id')!;
    await opened.body?.cancel();
    const hijack = await post(
      { authorization: 'Bearer someone-else', 'mcp-session-id': session },
      { jsonrpc: '2.0', id: 2, method: 'tools/list' },
    );
    expect(hijack.status).toBe(401);
  });

  it('refuses to listen beyond loopback without --insecure-listen', async () => {
    const result = await ringfence(['mcp', 'serve', '--http', '0.0.0.0:0'], {
      RINGFENCE_HOME: setup.home,
      RINGFENCE_MCP_TOKEN: TOKEN,
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(/only loopback addresses are allowed.*--insecure-listen/s);
  });
});
