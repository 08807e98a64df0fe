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
import { MAX_REQUEST_BODY_BYTES, RETRY_MS } from './http-transport.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const TOKEN = 'transport-test-token';

/**
 * An upstream whose `slow` call waits for `release()`, whose `chatty` call sends `progress`
 * notifications (of `progressBytes` each) before answering, and whose `stepwise` call sends one
 * progress notification, waits for `release()`, then sends `progress` more.
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
    return { tools: [tool('echo'), tool('slow'), tool('chatty'), tool('stepwise')], problems: [] };
  }
  async listPrompts() {
    return { prompts: [], problems: [] };
  }
  async callTool(name: string, args: Record<string, unknown>, options?: CallOptions) {
    if (name === 'slow') await TestUpstream.gate;
    if (name === 'stepwise') {
      // One progress event, then the gate, then `progress` more.
      options?.onProgress?.({ progress: 0, message: 'before' });
      await TestUpstream.gate;
      for (let i = 1; i <= TestUpstream.progress; i++)
        options?.onProgress?.({ progress: i, message: 'after' });
    }
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
interface Frame {
  id?: string;
  retry?: number;
  data: string;
}
/** The events of an SSE body (comments left out). */
const framesOf = (text: string): Frame[] =>
  text
    .split('\n\n')
    .filter((block) => block !== '' && !block.startsWith(':'))
    .map((block) => {
      const frame: Frame = { data: '' };
      for (const line of block.split('\n')) {
        const [field, value] = [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)];
        if (field === 'id') frame.id = value;
        else if (field === 'retry') frame.retry = Number(value);
        else if (field === 'data') frame.data = value;
      }
      return frame;
    });
/** The JSON-RPC messages of SSE text, in order (the priming event carries none). */
const messagesOf = (text: string) =>
  framesOf(text)
    .filter((f) => f.data !== '')
    .map((f) => JSON.parse(f.data));
/** The JSON-RPC messages of an SSE answer, in order. */
const eventsOf = async (response: Response) => messagesOf(await response.text());
const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: number; message: string } }).error;

/** A session opened by hand; returns its id. */
async function initialise(protocolVersion = LATEST_PROTOCOL_VERSION): Promise<string> {
  const response = await post({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: {
      protocolVersion,
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
  it('answers a call as an SSE stream, primed, and the SDK client takes it', async () => {
    await serve();
    const session = await initialise();
    const response = await post(call(1, 'echo'), { 'mcp-session-id': session });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(response.headers.get('mcp-session-id')).toBe(session);
    const frames = framesOf(await response.text());
    expect(frames[0]).toEqual({ id: expect.stringMatching(/:0$/), retry: RETRY_MS, data: '' });
    expect(frames.slice(1).map((f) => JSON.parse(f.data))).toMatchObject([
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
    await serve({ maxUnsentBytes: 256 * 1024, replayBytes: 1024 * 1024, replayEvents: 200 });
    const session = await initialise();
    // 64 MiB of progress: more than any socket buffer holds for a reader that never reads.
    TestUpstream.progress = 8192;
    TestUpstream.progressBytes = 8192;
    const socket = rawRequest(session, JSON.stringify(call(21, 'chatty', { _meta: { progressToken: 1 } })));
    socket.pause();
    // What is kept for its resumption stays within the replay buffer's bounds throughout.
    let most = { events: 0, bytes: 0 };
    const sampler = setInterval(() => {
      const kept = served.keptEvents();
      most = { events: Math.max(most.events, kept.events), bytes: Math.max(most.bytes, kept.bytes) };
    }, 1);
    await until(() => results().length === 1);
    await until(() => served.pendingRequests() === 0);
    clearInterval(sampler);
    expect(most.bytes).toBeGreaterThan(0);
    expect(most.bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(most.events).toBeLessThanOrEqual(200);
    // The last events, the result among them, wait for a resume.
    expect(served.keptEvents().bytes).toBeLessThanOrEqual(1024 * 1024);
    expect(served.keptEvents().bytes).toBeGreaterThan(1024 * 1024 - 8192 - 200);
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
    while (messagesOf(text).length === 0) text += (await reader.read()).value ?? '';
    expect(framesOf(text)[0]).toMatchObject({ id: expect.stringMatching(/:0$/), data: '' });
    expect(messagesOf(text)[0]).toEqual({
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
    // Ended cleanly, with nothing but its priming event: a client that comes back finds no session.
    expect(messagesOf(await stream.text())).toEqual([]);
    expect((await waiting).status).toBe(200);
    expect(served.sessionCount()).toBe(0);
    expect(served.pendingRequests()).toBe(0);
    expect((await post(call(32, 'echo'), { 'mcp-session-id': session })).status).toBe(404);
  });
});

/** Reads an SSE body as it comes: `until(enough)` waits until `enough` holds of its whole frames. */
function sseReader(response: Response) {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = '';
  const whole = () => framesOf(text.slice(0, text.lastIndexOf('\n\n') + 2));
  return {
    async until(enough: (frames: Frame[]) => boolean): Promise<Frame[]> {
      while (!enough(whole())) {
        const { value, done } = await reader.read();
        if (done) break;
        text += value;
      }
      return whole();
    },
  };
}
const resumeGet = (session: string, lastEventId: string) =>
  post(undefined, { 'mcp-session-id': session, 'last-event-id': lastEventId }, 'GET');
/**
 * Starts a `stepwise` call and breaks its connection once its first progress event arrived (the
 * server sees the connection go); returns that event's id.
 */
async function callAndBreak(session: string, id: number): Promise<string> {
  const abort = new AbortController();
  const response = await fetch(served.url, {
    method: 'POST',
    headers: { ...HEADERS, 'mcp-session-id': session },
    body: JSON.stringify(call(id, 'stepwise', { _meta: { progressToken: 'p' } })),
    signal: abort.signal,
  });
  const frames = await sseReader(response).until((fs) => fs.some((f) => f.data.includes('before')));
  abort.abort();
  await new Promise((r) => setTimeout(r, 50));
  return frames.at(-1)!.id!;
}
const kinds = (frames: Frame[]) =>
  frames.map((f) =>
    f.data === '' ? 'priming' : (JSON.parse(f.data).method ?? `result ${JSON.parse(f.data).id}`),
  );

describe('resumable streams', () => {
  it('sends the head of a streamed answer at once, before the call answers', async () => {
    await serve();
    const session = await initialise();
    TestUpstream.hold();
    const order: string[] = [];
    const responding = post(call(41, 'slow'), { 'mcp-session-id': session }).then((r) => {
      order.push(`head, ${results().length} results audited`);
      return r;
    });
    await until(() => served.pendingRequests() === 1);
    // A cap, not a measure: the head is expected long before it.
    await Promise.race([responding, new Promise((r) => setTimeout(r, 2_000))]);
    order.push('call released');
    TestUpstream.release();
    const response = await responding;
    expect(order).toEqual(['head, 0 results audited', 'call released']);
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await eventsOf(response)).toMatchObject([{ id: 41, result: {} }]);
  });

  it('numbers every event <stream>:<n> from the priming event on, a fresh random stream per answer', async () => {
    await serve({ keepAliveMs: 50 });
    const session = await initialise();
    TestUpstream.progress = 3;
    const s = { 'mcp-session-id': session };
    const first = framesOf(
      await (await post(call(42, 'chatty', { _meta: { progressToken: 'p' } }), s)).text(),
    );
    const second = framesOf(await (await post(call(43, 'echo'), s)).text());
    expect(first[0]).toEqual({ id: expect.any(String), retry: RETRY_MS, data: '' });
    const stream = first[0]!.id!.split(':')[0]!;
    expect(stream).toMatch(/^[A-Za-z0-9_-]{16}$/);
    expect(first.map((f) => f.id)).toEqual([0, 1, 2, 3, 4].map((n) => `${stream}:${n}`));
    expect(kinds(first)).toEqual(['priming', ...Array(3).fill('notifications/progress'), 'result 42']);
    expect(second.map((f) => f.id!.split(':')[0])).toEqual([second[0]!.id!.split(':')[0], expect.anything()]);
    expect(second[0]!.id!.split(':')[0]).not.toBe(stream);
    // Both delivered in full: kept a keep-alive tick or two (a connection may break as it goes), then let go.
    expect(served.keptEvents().events).toBeGreaterThan(0);
    await until(() => served.keptEvents().events === 0);
    expect((await resumeGet(session, first.at(-1)!.id!)).status).toBe(400);
  });

  it('does not prime a client of a revision before 2025-11-25 (its SDK fails on empty data), and still numbers its events', async () => {
    await serve();
    const session = await initialise('2025-06-18');
    const frames = framesOf(await (await post(call(44, 'echo'), { 'mcp-session-id': session })).text());
    expect(frames).toHaveLength(1);
    expect(frames[0]).toMatchObject({ id: expect.stringMatching(/^[A-Za-z0-9_-]{16}:1$/) });
    expect(frames[0]!.retry).toBeUndefined();
  });

  it('a client whose connection broke gets exactly the events it missed with Last-Event-ID, then the stream ends', async () => {
    await serve();
    const session = await initialise();
    TestUpstream.hold();
    TestUpstream.progress = 2;
    const seen = await callAndBreak(session, 45);
    const stream = seen.split(':')[0]!;
    expect(seen).toBe(`${stream}:1`);
    TestUpstream.release();
    await until(() => results().length === 1);
    const resumed = await resumeGet(session, seen);
    expect(resumed.status).toBe(200);
    const replayed = framesOf(await resumed.text());
    expect(replayed.map((f) => f.id)).toEqual([2, 3, 4].map((n) => `${stream}:${n}`));
    expect(kinds(replayed)).toEqual(['notifications/progress', 'notifications/progress', 'result 45']);
    // Delivered now: a resume from its last event finds nothing more, and ends.
    const again = await resumeGet(session, replayed.at(-1)!.id!);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe('');
  });

  it('a resume during the call replays what was missed and carries the rest of the stream', async () => {
    await serve();
    const session = await initialise();
    TestUpstream.hold();
    TestUpstream.progress = 1;
    const seen = await callAndBreak(session, 46);
    const stream = seen.split(':')[0]!;
    const resumed = sseReader(await resumeGet(session, `${stream}:0`));
    const early = await resumed.until((fs) => fs.length === 1);
    expect(early.map((f) => f.id)).toEqual([`${stream}:1`]);
    TestUpstream.release();
    const frames = await resumed.until((fs) => fs.length === 3);
    expect(kinds(frames)).toEqual(['notifications/progress', 'notifications/progress', 'result 46']);
    expect(frames.map((f) => f.id)).toEqual([1, 2, 3].map((n) => `${stream}:${n}`));
  });

  it("refuses another session's Last-Event-ID, a forged or malformed one, and replays nothing", async () => {
    await serve();
    const alice = await initialise();
    const bob = await initialise();
    TestUpstream.hold();
    TestUpstream.progress = 1;
    const seen = await callAndBreak(alice, 47);
    const stream = seen.split(':')[0]!;
    TestUpstream.release();
    await until(() => results().length === 1);
    const attempts: Array<[string, string]> = [
      [bob, seen],
      [bob, `${stream}:0`],
      [alice, `${stream}:99`],
      [alice, `${stream}:-1`],
      [alice, `${stream}:1.5`],
      [alice, stream],
      [alice, `AAAAAAAAAAAAAAAA:1`],
      [alice, `:${seen}`],
    ];
    for (const [session, id] of attempts) {
      const refused = await resumeGet(session, id);
      expect(refused.status, id).toBe(400);
      expect(refused.headers.get('content-type')).toBe('application/json');
      expect((await errorOf(refused)).message).toMatch(
        /Last-Event-ID names no event of this session .*another session.*nothing was replayed/,
      );
    }
    // Alice's own resume is untouched by the attempts.
    expect(kinds(framesOf(await (await resumeGet(alice, seen)).text()))).toEqual([
      'notifications/progress',
      'result 47',
    ]);
  });

  it('refuses a resume from before events the bounded buffer dropped, and replays from a kept one', async () => {
    await serve({ replayEvents: 4 });
    const session = await initialise();
    TestUpstream.hold();
    TestUpstream.progress = 10;
    const seen = await callAndBreak(session, 48);
    const stream = seen.split(':')[0]!;
    TestUpstream.release();
    await until(() => results().length === 1);
    // 11 events were sent while nobody listened (2..12); the buffer kept the last four.
    expect(served.keptEvents().events).toBe(4);
    const gone = await resumeGet(session, seen);
    expect(gone.status).toBe(410);
    expect((await errorOf(gone)).message).toMatch(
      /dropped from this session's replay buffer .*nothing was replayed/,
    );
    const kept = framesOf(await (await resumeGet(session, `${stream}:8`)).text());
    expect(kept.map((f) => f.id)).toEqual([9, 10, 11, 12].map((n) => `${stream}:${n}`));
    expect(kinds(kept).at(-1)).toBe('result 48');
  });

  it('a real SDK client (v2) whose answer stream broke comes back with Last-Event-ID and gets its result', async () => {
    await serve();
    TestUpstream.hold();
    const resumedFrom: string[] = [];
    let cut = false;
    const breakingFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
      const last = new Headers(init?.headers).get('last-event-id');
      if (init?.method === 'GET' && last) resumedFrom.push(last);
      const response = await fetch(input, init);
      if (cut || init?.method !== 'POST' || !String(init.body).includes('tools/call')) return response;
      cut = true;
      // The network fails after the first bytes of the answer (its priming event).
      const reader = response.body!.getReader();
      const body = new ReadableStream<Uint8Array>({
        async start(controller) {
          controller.enqueue((await reader.read()).value!);
          await reader.cancel();
          controller.error(new Error('connection reset'));
        },
      });
      return new Response(body, { status: response.status, headers: response.headers });
    };
    const client = new Client({ name: 'v2', version: '1' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(served.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
        fetch: breakingFetch,
      }),
    );
    const answer = client.callTool({ name: 'up_slow', arguments: { n: 1 } });
    await until(() => cut);
    await new Promise((r) => setTimeout(r, 50));
    TestUpstream.release();
    expect((await answer).content).toEqual([{ type: 'text', text: 'slow: {"n":1}' }]);
    expect(resumedFrom).toEqual([expect.stringMatching(/^[A-Za-z0-9_-]{16}:0$/)]);
    await client.close();
  }, 15_000);
});
