// The fixture, through a real SDK client: what the suite's scenarios need, and the rules the
// suite does not check but a gateway in front of the fixture will meet (progress only with a
// token, the log level filters, sampling without the capability fails instead of hanging).
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PNG_BASE64 } from '../fixtures/everything.mjs';
import { serveHttp } from '../fixtures/http.mjs';

const ENTRY = fileURLToPath(new URL('../fixtures/everything-server.mjs', import.meta.url));
const TOOLS = [
  'test_simple_text',
  'test_image_content',
  'test_audio_content',
  'test_embedded_resource',
  'test_multiple_content_types',
  'test_tool_with_logging',
  'test_tool_with_progress',
  'test_error_handling',
  'test_sampling',
  'test_elicitation',
  'test_elicitation_sep1034_defaults',
  'test_elicitation_sep1330_enums',
];

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

async function connect(capabilities = { sampling: {}, elicitation: {} }) {
  const client = new Client({ name: 'fixture-test', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(fixture.url)));
  clients.push(client);
  return client;
}

describe('tools', () => {
  it('lists every tool the suite calls, each with a description and an input schema', async () => {
    const { tools } = await (await connect()).listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...TOOLS].sort());
    for (const tool of tools) {
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type, tool.name).toBe('object');
    }
  });

  it('returns each content type', async () => {
    const client = await connect();
    const types = async (name) =>
      (await client.callTool({ name, arguments: {} })).content.map((c) => [
        c.type,
        c.mimeType ?? c.resource?.mimeType,
      ]);
    expect(await types('test_simple_text')).toEqual([['text', undefined]]);
    expect(await types('test_image_content')).toEqual([['image', 'image/png']]);
    expect(await types('test_audio_content')).toEqual([['audio', 'audio/wav']]);
    expect(await types('test_embedded_resource')).toEqual([['resource', 'text/plain']]);
    expect(await types('test_multiple_content_types')).toEqual([
      ['text', undefined],
      ['image', 'image/png'],
      ['resource', 'application/json'],
    ]);
    // The suite calls this one with no arguments at all.
    expect((await client.callTool({ name: 'test_simple_text' })).isError).toBeFalsy();
  });

  it('fails test_error_handling with an error result, not a protocol error', async () => {
    const result = await (await connect()).callTool({ name: 'test_error_handling', arguments: {} });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/intentionally/);
  });

  it('reports progress 0, 50, 100 to a caller with a token, and none to one without', async () => {
    const client = await connect();
    // Every progress notification that arrives, whatever the client's own handling makes of it.
    const arrived = [];
    const onmessage = client.transport.onmessage;
    client.transport.onmessage = (message, extra) => {
      if (message.method === 'notifications/progress') arrived.push(message.params);
      onmessage(message, extra);
    };
    const seen = [];
    await client.request(
      { method: 'tools/call', params: { name: 'test_tool_with_progress', arguments: {} } },
      CallToolResultSchema,
      { onprogress: (p) => seen.push(p.progress) },
    );
    expect(seen).toEqual([0, 50, 100]);
    expect(arrived).toHaveLength(3);
    const result = await client.callTool({ name: 'test_tool_with_progress', arguments: {} });
    expect(result.content[0].text).toBe('progress token: undefined');
    expect(arrived).toHaveLength(3);
  });

  it('sends three info log messages, filtered by the level the session set', async () => {
    const client = await connect();
    const logs = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      logs.push(n.params);
    });
    await client.setLoggingLevel('warning');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logs).toEqual([]);
    await client.setLoggingLevel('debug');
    await client.callTool({ name: 'test_tool_with_logging', arguments: {} });
    expect(logs.map((l) => [l.level, l.data])).toEqual([
      ['info', 'Tool execution started'],
      ['info', 'Tool processing data'],
      ['info', 'Tool execution completed'],
    ]);
  });

  it('asks the client to sample the prompt and returns its answer', async () => {
    const client = await connect();
    const asked = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params.messages[0].content.text);
      return { role: 'assistant', content: { type: 'text', text: 'sampled!' }, model: 'm' };
    });
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
    expect(asked).toEqual(['hello']);
    expect(result.content[0].text).toBe('LLM response: sampled!');
  });

  it('fails the sampling tool (not hangs) for a client that cannot sample', async () => {
    const client = await connect({});
    const result = await client.callTool({ name: 'test_sampling', arguments: { prompt: 'hello' } });
    expect(result.isError).toBe(true);
    expect(result.content[0].text).toMatch(/^sampling\/createMessage failed: /);
  });

  it('elicits with the schemas of SEP-1034 and SEP-1330 and reports the answer', async () => {
    const client = await connect();
    const schemas = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      schemas.push(request.params.requestedSchema);
      return { action: 'accept', content: { response: 'yes' } };
    });
    const plain = await client.callTool({ name: 'test_elicitation', arguments: { message: 'Name?' } });
    expect(plain.content[0].text).toBe('User response: action=accept, content={"response":"yes"}');
    await client.callTool({ name: 'test_elicitation_sep1034_defaults', arguments: {} });
    await client.callTool({ name: 'test_elicitation_sep1330_enums', arguments: {} });
    expect(schemas[1].properties.age).toMatchObject({ type: 'integer', default: 30 });
    expect(schemas[1].properties.score.default).toBe(95.5);
    expect(Object.keys(schemas[2].properties)).toEqual([
      'untitledSingle',
      'titledSingle',
      'legacyEnum',
      'untitledMulti',
      'titledMulti',
    ]);
  });
});

describe('resources, prompts, completion', () => {
  it('lists and reads the static resources and fills the template', async () => {
    const client = await connect();
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'test://static-binary',
      'test://static-text',
      'test://watched-resource',
    ]);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['test://template/{id}/data']);
    expect((await client.readResource({ uri: 'test://static-text' })).contents[0].text).toMatch(
      /static text/,
    );
    expect((await client.readResource({ uri: 'test://static-binary' })).contents[0].blob).toBe(PNG_BASE64);
    const filled = (await client.readResource({ uri: 'test://template/777/data' })).contents[0];
    expect(filled.uri).toBe('test://template/777/data');
    expect(JSON.parse(filled.text)).toMatchObject({ id: '777', templateTest: true });
  });

  it('keeps subscriptions per session: unsubscribe removes what subscribe added', async () => {
    const client = await connect();
    await client.subscribeResource({ uri: 'test://watched-resource' });
    const [session] = [...fixture.sessions.values()].filter((s) => s.subscriptions.size > 0);
    expect([...session.subscriptions]).toEqual(['test://watched-resource']);
    await client.unsubscribeResource({ uri: 'test://watched-resource' });
    expect(session.subscriptions.size).toBe(0);
  });

  it('serves the four prompts with arguments substituted', async () => {
    const client = await connect();
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name).sort()).toEqual([
      'test_prompt_with_arguments',
      'test_prompt_with_embedded_resource',
      'test_prompt_with_image',
      'test_simple_prompt',
    ]);
    for (const prompt of prompts) expect(prompt.description, prompt.name).toBeTruthy();
    const withArgs = await client.getPrompt({
      name: 'test_prompt_with_arguments',
      arguments: { arg1: 'a1', arg2: 'b2' },
    });
    expect(withArgs.messages[0].content.text).toBe("Prompt with arguments: arg1='a1', arg2='b2'");
    const embedded = await client.getPrompt({
      name: 'test_prompt_with_embedded_resource',
      arguments: { resourceUri: 'test://x' },
    });
    expect(embedded.messages[0].content).toMatchObject({ type: 'resource', resource: { uri: 'test://x' } });
    const image = await client.getPrompt({ name: 'test_prompt_with_image' });
    expect(image.messages[0].content).toMatchObject({ type: 'image', mimeType: 'image/png' });
  });

  it('completes the prompt argument arg1 and the template variable id by prefix', async () => {
    const client = await connect();
    const prompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'test_prompt_with_arguments' },
      argument: { name: 'arg1', value: 'pa' },
    });
    expect(prompt.completion.values).toEqual(['paris', 'park', 'party']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'test://template/{id}/data' },
      argument: { name: 'id', value: '12' },
    });
    expect(template.completion.values).toEqual(['123', '124']);
  });
});

describe('HTTP', () => {
  const initialize = (url, headers = {}) =>
    fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });

  it('refuses a foreign Host or Origin with 403 (DNS rebinding) and accepts loopback ones', async () => {
    // fetch does not let a caller set Host; node:http does.
    const { request } = await import('node:http');
    const status = (headers) =>
      new Promise((resolve, reject) => {
        const url = new URL(fixture.url);
        const req = request(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers },
          (res) => {
            res.resume();
            resolve(res.statusCode);
          },
        );
        req.on('error', reject);
        req.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 't', version: '1' },
            },
          }),
        );
      });
    const base = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    const port = new URL(fixture.url).port;
    expect(await status({ ...base, host: 'evil.example.com' })).toBe(403);
    expect(await status({ ...base, host: `localhost:${port}`, origin: 'http://evil.example.com' })).toBe(403);
    expect(await status({ ...base, host: `localhost:${port}`, origin: `http://localhost:${port}` })).toBe(
      200,
    );
    expect(await status({ ...base, host: `[::1]:${port}` })).toBe(200);
  });

  it('accepts a host named with --allowed-host, and only that one', async () => {
    const other = await serveHttp({ allowedHosts: ['fixture.internal'] });
    try {
      const { hostnameOf, rebindingRefusal } = await import('../fixtures/http.mjs');
      expect(hostnameOf('fixture.internal:80')).toBe('fixture.internal');
      const allowed = new Set(['localhost', 'fixture.internal']);
      expect(rebindingRefusal({ host: 'fixture.internal:3000' }, allowed)).toBeUndefined();
      expect(rebindingRefusal({ host: 'fixture.internal.evil:3000' }, allowed)).toMatch(/not allowed/);
      expect((await initialize(other.url)).status).toBe(200);
    } finally {
      await other.close();
    }
  });

  it('answers 404 for an unknown session and for another path', async () => {
    expect((await initialize(fixture.url, { 'mcp-session-id': 'nope' })).status).toBe(404);
    expect((await initialize(fixture.url.replace('/mcp', '/other'))).status).toBe(404);
  });
});

describe('the executable', () => {
  it('serves over stdio with --stdio', async () => {
    const client = new Client({ name: 'fixture-test', version: '1.0.0' });
    await client.connect(new StdioClientTransport({ command: process.execPath, args: [ENTRY, '--stdio'] }));
    try {
      expect((await client.listTools()).tools).toHaveLength(TOOLS.length);
    } finally {
      await client.close();
    }
  });

  it('refuses an unknown argument with exit 2 and the usage', async () => {
    const child = spawn(process.execPath, [ENTRY, '--bogus'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const code = await new Promise((resolve) => child.on('close', resolve));
    expect(code).toBe(2);
    expect(stderr).toMatch(/unknown argument --bogus; use --stdio, or --http HOST:PORT/);
  });
});
