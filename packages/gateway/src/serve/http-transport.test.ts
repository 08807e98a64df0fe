import { mkdtemp, rm } from 'node:fs/promises';
import { connect as connectTcp, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, LATEST_PROTOCOL_VERSION, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AuditInput } from '../audit/types.js';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { CallOptions, ToolListing, Upstream } from '../ports/upstream.js';
import { NO_RESOURCES } from './__fixtures__/no-resources.js';
import { Gateway } from './gateway.js';
import { type SessionLimits, serveHttp } from './http.js';
import { MAX_REQUEST_BODY_BYTES } from './http-transport.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const TOKEN = 'transport-test-token';

/**
 * An upstream whose `slow` call waits for `release()` and whose `chatty` call sends `progress`
 * notifications (of `progressBytes` each) before answering.
 */
class TestUpstream implements Upstream {
  readonly name = 'up';
  readonly destination = 'remote fake';
  readonly limits = DEFAULT_CALL_LIMITS;
  static progress = 2;
  static progressBytes = 10;
  static gate: Promise<void> = Promise.resolve();
  static release: () => void = () => {};
  static hold() {
    TestUpstream.gate = new Promise((resolve) => {
      TestUpstream.release = resolve;
    });
  }
  async start() {}
  capabilities() {
    return { prompts: false, completions: false, logging: false };
  }
  async listTools(): Promise<ToolListing> {
    const tool = (name: string) => ({ name, description: name, inputSchema: { type: 'object' as const } });
    return { tools: [tool('echo'), tool('slow'), tool('chatty')], problems: [] };
  }
  async listPrompts() {
    return { prompts: [], problems: [] };
  }
  async callTool(name: string, args: Record<string, unknown>, options?: CallOptions) {
    if (name === 'slow') await TestUpstream.gate;
    if (name === 'chatty')
      for (let i = 0; i < TestUpstream.progress; i++)
        options?.onProgress?.({ progress: i, message: 'x'.repeat(TestUpstream.progressBytes) });
    return { content: [{ type: 'text', text: `${name}: ${JSON.stringify(args)}` }] };
  }
  async getPrompt(): Promise<unknown> {
    throw new Error('not offered');
  }
  async complete(): Promise<unknown> {
    throw new Error('not offered');
  }
  readonly listResources = NO_RESOURCES.listResources;
  readonly listResourceTemplates = NO_RESOURCES.listResourceTemplates;
  readonly readResource = NO_RESOURCES.readResource;
  readonly subscribeResource = NO_RESOURCES.subscribeResource;
  readonly onResourceUpdated = NO_RESOURCES.onResourceUpdated;
  async setLoggingLevel() {}
  onListChanged() {}
  onLog() {}
  onServerRequest() {}
  onClosed() {}
  async close() {}
}

let home: string;
let gateway: Gateway;
let served: Awaited<ReturnType<typeof serveHttp>>;
let audited: AuditInput[];
const sockets: Socket[] = [];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-http-transport-'));
  audited = [];
  TestUpstream.progress = 2;
  TestUpstream.progressBytes = 10;
  TestUpstream.gate = Promise.resolve();
  const audit: AuditSink = {
    append: async (input) => {
      audited.push(input);
      return audited.length;
    },
  };
  gateway = new Gateway({
    servers: [{ name: 'up', transport: 'http', url: 'https://example.invalid/mcp' }],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: () => new TestUpstream(),
    log: () => {},
    session: 'test',
  });
  await gateway.start();
});
afterEach(async () => {
  TestUpstream.release();
  for (const socket of sockets.splice(0)) socket.destroy();
  await served?.close();
  await gateway.close();
  await rm(home, { recursive: true, force: true });
});

const serve = async (sessions: SessionLimits = {}) => {
  served = await serveHttp(gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) => (t === TOKEN ? {} : undefined),
    sessions,
  });
};

const HEADERS = {
  authorization: `Bearer ${TOKEN}`,
  accept: 'application/json, text/event-stream',
  'content-type': 'application/json',
};
const post = (body: unknown, headers: Record<string, string> = {}, method = 'POST') =>
  fetch(served.url, {
    method,
    headers: { ...HEADERS, ...headers },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
/** The JSON-RPC messages of an SSE answer, in order. */
const eventsOf = async (response: Response) =>
  (await response.text())
    .split('\n\n')
    .filter((e) => e.startsWith('event: message\ndata: '))
    .map((e) => JSON.parse(e.slice('event: message\ndata: '.length)));
const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: number; message: string } }).error;

/** A session opened by hand; returns its id. */
async function initialise(): Promise<string> {
  const response = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion: LATEST_PROTOCOL_VERSION,
      capabilities: {},
      clientInfo: { name: 'transport-test', version: '1' },
    },
  });
  expect(response.status).toBe(200);
  await response.text();
  const id = response.headers.get('mcp-session-id')!;
  const initialised = await post(
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { 'mcp-session-id': id },
  );
  expect(initialised.status).toBe(202);
  return id;
}
const call = (id: number, name: string, extra: Record<string, unknown> = {}) => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: `up_${name}`, arguments: { n: id }, ...extra },
});

/** Raw HTTP on a socket of its own, for clients that misbehave below fetch. */
function rawRequest(session: string, body: string): Socket {
  const { port } = new URL(served.url);
  const socket = connectTcp(Number(port), '127.0.0.1');
  sockets.push(socket);
  socket.on('error', () => {}); // a dropped stream may reach it as a reset
  socket.write(
    `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\n` +
      `accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n` +
      `mcp-session-id: ${session}\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  return socket;
}
const until = async (what: () => boolean) => {
  for (let i = 0; i < 500 && !what(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(what()).toBe(true);
};
const results = () => audited.filter((e) => e.type === 'mcp.result');

describe('answers', () => {
  it('answers a call with nothing before its result as one sized SSE event, and the SDK client takes it', async () => {
    await serve();
    const session = await initialise();
    const response = await post(call(1, 'echo'), { 'mcp-session-id': session });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('mcp-session-id')).toBe(session);
    // Sent whole, in one write: a length rather than chunks.
    expect(response.headers.get('content-length')).toMatch(/^\d+$/);
    expect(response.headers.get('transfer-encoding')).toBeNull();
    expect(await eventsOf(response)).toMatchObject([
      { jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text' }] } },
    ]);

    const client = new Client({ name: 'sdk', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(served.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    const answer = await client.callTool({ name: 'up_echo', arguments: { text: 'hi' } });
    expect(answer.content).toEqual([{ type: 'text', text: 'echo: {"text":"hi"}' }]);
    await client.close();
  });

  it('streams progress notifications before the result as SSE', async () => {
    await serve();
    const session = await initialise();
    const response = await post(call(2, 'chatty', { _meta: { progressToken: 'p' } }), {
      'mcp-session-id': session,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    const events = await eventsOf(response);
    expect(events.map((e) => e.method ?? `result ${e.id}`)).toEqual([
      'notifications/progress',
      'notifications/progress',
      'result 2',
    ]);
    expect(events[0].params).toMatchObject({ progressToken: 'p', progress: 0 });
  });

  it('answers a batch of calls on one stream, and a batch of notifications with 202', async () => {
    await serve();
    const session = await initialise();
    const batch = await post([call(3, 'echo'), call(4, 'echo')], { 'mcp-session-id': session });
    const answers = (await eventsOf(batch)) as Array<{ id: number }>;
    expect(answers.map((a) => a.id).sort()).toEqual([3, 4]);
    const notes = await post([{ jsonrpc: '2.0', method: 'notifications/roots/list_changed' }], {
      'mcp-session-id': session,
    });
    expect(notes.status).toBe(202);
  });
});

describe('refusals', () => {
  it('refuses what the spec and the SDK refuse, with their statuses and codes', async () => {
    await serve();
    const session = await initialise();
    const s = { 'mcp-session-id': session };
    const cases: Array<[Promise<Response>, number, number | undefined, RegExp | undefined]> = [
      [post('{"jsonrpc": "2.0", "id": 1, "method":', s), 400, -32700, /Invalid JSON$/],
      [post({ jsonrpc: '2.0', id: 1, method: 7 }, s), 400, -32700, /Invalid JSON-RPC message/],
      [post(call(1, 'echo'), { ...s, 'content-type': 'text/plain' }), 415, -32000, /Content-Type/],
      [
        post(call(1, 'echo'), { ...s, 'content-type': 'text/plain; a=application/json' }),
        415,
        -32000,
        /Content-Type/,
      ],
      [post(call(1, 'echo'), { ...s, accept: 'application/json' }), 406, -32000, /accept both/],
      [
        post(call(1, 'echo'), { ...s, 'mcp-protocol-version': '1999-01-01' }),
        400,
        -32000,
        /protocol version/,
      ],
      [
        post(
          Array.from({ length: 101 }, (_, i) => call(i, 'echo')),
          s,
        ),
        400,
        -32600,
        /exceed 100/,
      ],
      [post(call(1, 'echo'), { 'mcp-session-id': 'not-a-session' }), 404, -32001, /Unknown or expired/],
      [post(call(1, 'echo')), 400, -32000, /not initialized/],
      [post(call(1, 'echo'), { ...s, authorization: '' }), 401, -32001, /bearer token/],
      [post(call(1, 'echo'), { ...s, authorization: 'Bearer wrong' }), 401, -32001, /bearer token/],
      [post(undefined, { ...s, accept: 'application/json' }, 'GET'), 406, -32000, /text\/event-stream/],
      [post(undefined, s, 'PUT'), 405, -32000, /Method not allowed/],
      [post(undefined, {}, 'GET'), 400, -32001, /POST first/],
    ];
    for (const [pending, status, code, message] of cases) {
      const response = await pending;
      expect(response.status).toBe(status);
      const error = await errorOf(response);
      expect(error.code).toBe(code);
      expect(error.message).toMatch(message!);
    }
    // The session survived every refusal.
    expect((await post(call(9, 'echo'), s)).status).toBe(200);
  });

  it('refuses a second initialize and a batch that initialises twice', async () => {
    await serve();
    const session = await initialise();
    const init = {
      jsonrpc: '2.0',
      id: 5,
      method: 'initialize',
      params: {
        protocolVersion: LATEST_PROTOCOL_VERSION,
        capabilities: {},
        clientInfo: { name: 'x', version: '1' },
      },
    };
    const again = await post(init, { 'mcp-session-id': session });
    expect(again.status).toBe(400);
    expect((await errorOf(again)).message).toMatch(/already initialized/);
    const twice = await post([init, { ...init, id: 6 }]);
    expect(twice.status).toBe(400);
    expect((await errorOf(twice)).message).toMatch(/Only one initialization/);
    expect(served.sessionCount()).toBe(1);
  });

  it('refuses a body over the cap, declared or streamed, and the connection serves the next request', async () => {
    await serve();
    const session = await initialise();
    const big = JSON.stringify(call(1, 'echo', { pad: 'x'.repeat(MAX_REQUEST_BODY_BYTES) }));
    const declared = await post(big, { 'mcp-session-id': session });
    expect(declared.status).toBe(413);
    expect((await errorOf(declared)).message).toMatch(/must not exceed 4194304 bytes/);
    // Without a length: chunked, counted as it arrives.
    const streamed = await fetch(served.url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': session },
      body: new ReadableStream({
        start(controller) {
          const chunk = new TextEncoder().encode('x'.repeat(1 << 20));
          for (let i = 0; i < 6; i++) controller.enqueue(chunk);
          controller.close();
        },
      }),
      duplex: 'half',
    } as RequestInit);
    expect(streamed.status).toBe(413);
    await streamed.text();
    expect((await post(call(2, 'echo'), { 'mcp-session-id': session })).status).toBe(200);
  });

  it('refuses a request id already in flight in the session, and leaves the first call alone', async () => {
    await serve();
    const session = await initialise();
    TestUpstream.hold();
    const first = post(call(7, 'slow'), { 'mcp-session-id': session });
    await until(() => served.pendingRequests() === 1);
    const reused = await post(call(7, 'echo'), { 'mcp-session-id': session });
    expect(reused.status).toBe(400);
    expect((await errorOf(reused)).message).toMatch(/request id 7 is already in flight/);
    const twiceInBatch = await post([call(8, 'echo'), call(8, 'echo')], { 'mcp-session-id': session });
    expect(twiceInBatch.status).toBe(400);
    TestUpstream.release();
    expect(await eventsOf(await first)).toMatchObject([
      { id: 7, result: { content: [{ text: 'slow: {"n":7}' }] } },
    ]);
    expect(served.pendingRequests()).toBe(0);
  });
});

describe('clients that go away or stop reading', () => {
  it('a client that disconnects mid-call: the call completes, its result is audited, nothing is left', async () => {
    await serve();
    const session = await initialise();
    TestUpstream.hold();
    const socket = rawRequest(session, JSON.stringify(call(11, 'slow')));
    await until(() => served.pendingRequests() === 1);
    socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(results()).toHaveLength(0);
    TestUpstream.release();
    await until(() => results().length === 1);
    expect(results()[0]).toMatchObject({ type: 'mcp.result' });
    await until(() => served.pendingRequests() === 0);
    // The session carries on.
    expect((await post(call(12, 'echo'), { 'mcp-session-id': session })).status).toBe(200);
  });

  it('a client that goes away halfway through its body: nothing is dispatched, the session carries on', async () => {
    await serve();
    const session = await initialise();
    const { port } = new URL(served.url);
    const socket = connectTcp(Number(port), '127.0.0.1');
    sockets.push(socket);
    socket.on('error', () => {});
    const body = JSON.stringify(call(13, 'echo'));
    const entries = audited.length;
    await new Promise<void>((resolve) =>
      socket.write(
        `POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:${port}\r\nauthorization: Bearer ${TOKEN}\r\n` +
          `accept: application/json, text/event-stream\r\ncontent-type: application/json\r\n` +
          `mcp-session-id: ${session}\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 20)}`,
        () => resolve(),
      ),
    );
    await new Promise((r) => setTimeout(r, 50));
    socket.destroy();
    await new Promise((r) => setTimeout(r, 50));
    expect(audited).toHaveLength(entries);
    expect(served.pendingRequests()).toBe(0);
    expect(await eventsOf(await post(call(14, 'echo'), { 'mcp-session-id': session }))).toMatchObject([
      { id: 14 },
    ]);
  });

  it('a client that stops reading its stream loses that stream, not the gateway: others are served and the call is audited', async () => {
    await serve({ maxUnsentBytes: 256 * 1024 });
    const session = await initialise();
    // 64 MiB of progress: more than any socket buffer holds for a reader that never reads.
    TestUpstream.progress = 8192;
    TestUpstream.progressBytes = 8192;
    const socket = rawRequest(session, JSON.stringify(call(21, 'chatty', { _meta: { progressToken: 1 } })));
    socket.pause();
    await until(() => results().length === 1);
    await until(() => served.pendingRequests() === 0);
    // The client can read at most what was in flight when its stream was dropped (a reset may
    // discard even that): never the result.
    let received = '';
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString();
    });
    await new Promise<void>((resolve) => {
      socket.once('close', () => resolve());
      socket.resume();
    });
    expect(received).not.toContain('"id":21');
    expect(received.length).toBeLessThan(32 * 1024 * 1024);
    TestUpstream.progress = 0;
    const other = await post(call(22, 'echo'), { 'mcp-session-id': session });
    expect(await eventsOf(other)).toMatchObject([{ id: 22, result: {} }]);
  });

  it('sends a change of the tool list on the session GET stream', async () => {
    await serve();
    const session = await initialise();
    const stream = await post(undefined, { 'mcp-session-id': session }, 'GET');
    expect(stream.status).toBe(200);
    const reader = stream.body!.pipeThrough(new TextDecoderStream()).getReader();
    gateway.emit('catalogChanged');
    let text = '';
    while (!text.includes('\n\n')) text += (await reader.read()).value ?? '';
    expect(JSON.parse(text.slice(text.indexOf('data: ') + 6))).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
    });
    await reader.cancel();
  });

  it('ends a GET stream and a waiting call when the session is deleted', async () => {
    await serve();
    const session = await initialise();
    const stream = await post(undefined, { 'mcp-session-id': session }, 'GET');
    expect(stream.headers.get('content-type')).toBe('text/event-stream');
    const second = await post(undefined, { 'mcp-session-id': session }, 'GET');
    expect(second.status).toBe(409);
    TestUpstream.hold();
    const waiting = post(call(31, 'slow'), { 'mcp-session-id': session });
    await until(() => served.pendingRequests() === 1);
    const deleted = await post(undefined, { 'mcp-session-id': session }, 'DELETE');
    expect(deleted.status).toBe(200);
    await expect(stream.text()).resolves.toBe('');
    expect((await waiting).status).toBe(200);
    expect(served.sessionCount()).toBe(0);
    expect(served.pendingRequests()).toBe(0);
    expect((await post(call(32, 'echo'), { 'mcp-session-id': session })).status).toBe(404);
  });
});
