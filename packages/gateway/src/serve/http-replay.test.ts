import { createServer, type Server } from 'node:http';
import type { JSONRPCMessage, MessageExtraInfo } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { ReplayBuffer } from './http-replay.js';
import { HttpSessionTransport } from './http-transport.js';

const data = (n: number, pad = 0) => JSON.stringify({ n, pad: 'x'.repeat(pad) });
const ids = (frames: string[]) => frames.map((f) => /\nid: (\S+)\n/.exec(f)![1]);

describe('ReplayBuffer', () => {
  it('numbers events per stream and replays exactly those after an id', () => {
    const buffer = new ReplayBuffer(10, 1 << 20);
    const a = buffer.open(undefined);
    const b = buffer.open(undefined);
    for (let i = 0; i < 3; i++) {
      buffer.record(a, data(i));
      buffer.record(b, data(i));
    }
    const found = buffer.resume(`${a.id}:1`);
    expect('frames' in found && ids(found.frames)).toEqual([`${a.id}:2`, `${a.id}:3`]);
    const all = buffer.resume(`${b.id}:0`);
    expect('frames' in all && ids(all.frames)).toEqual([1, 2, 3].map((n) => `${b.id}:${n}`));
  });

  it('holds its count and byte bounds, and refuses a resume from before what it dropped', () => {
    const buffer = new ReplayBuffer(5, 4096);
    const stream = buffer.open(undefined);
    for (let i = 0; i < 50; i++) buffer.record(stream, data(i, 100));
    expect(buffer.size().events).toBe(5);
    for (let i = 0; i < 50; i++) buffer.record(stream, data(i, 1000));
    expect(buffer.size().bytes).toBeLessThanOrEqual(4096);
    expect(buffer.size().events).toBe(3);
    expect(buffer.resume(`${stream.id}:96`)).toMatchObject({ status: 410 });
    const kept = buffer.resume(`${stream.id}:97`);
    expect('frames' in kept && ids(kept.frames)).toEqual([98, 99, 100].map((n) => `${stream.id}:${n}`));
  });

  it('does not keep an event larger than its byte bound, and keeps the others of the session', () => {
    const buffer = new ReplayBuffer(100, 4096);
    const quiet = buffer.open(undefined);
    const loud = buffer.open(undefined);
    buffer.record(quiet, data(1));
    buffer.record(loud, data(1));
    buffer.record(loud, data(2, 8192));
    buffer.record(loud, data(3));
    expect(buffer.size().events).toBe(2);
    expect(buffer.resume(`${loud.id}:1`)).toMatchObject({ status: 410 });
    expect(buffer.resume(`${loud.id}:2`)).toMatchObject({ frames: [expect.stringContaining('"n":3')] });
    expect(buffer.resume(`${quiet.id}:0`)).toMatchObject({ frames: [expect.stringContaining('"n":1')] });
  });

  it('finds nothing for an id of another buffer, a released stream, or one never issued', () => {
    const mine = new ReplayBuffer();
    const theirs = new ReplayBuffer();
    const stream = theirs.open(undefined);
    theirs.record(stream, data(1));
    expect(mine.resume(`${stream.id}:0`)).toMatchObject({ status: 400 });
    expect(theirs.resume(`${stream.id}:2`)).toMatchObject({ status: 400 });
    theirs.release(stream);
    expect(theirs.resume(`${stream.id}:0`)).toMatchObject({ status: 400 });
    expect(theirs.size()).toEqual({ events: 0, bytes: 0 });
  });

  it('keeps its queue small when streams are released out of order', () => {
    const buffer = new ReplayBuffer(8, 1 << 20);
    const long = buffer.open(undefined);
    buffer.record(long, data(0));
    for (let i = 0; i < 10_000; i++) {
      const short = buffer.open(undefined);
      buffer.record(short, data(i));
      buffer.release(short);
    }
    expect(buffer.size().events).toBe(1);
    expect((buffer as unknown as { queue: unknown[] }).queue.length).toBeLessThanOrEqual(2 * 8 + 64 + 1);
    expect(buffer.resume(`${long.id}:0`)).toMatchObject({ frames: [expect.stringContaining('"n":0')] });
  });
});

describe('closing a stream politely (closeSSEStream)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
  });

  it('ends the connection after the priming event; the client comes back with Last-Event-ID for the rest', async () => {
    const transport = new HttpSessionTransport({ newSessionId: () => 'session-1' });
    let closeStream: (() => void) | undefined;
    transport.onmessage = (message: JSONRPCMessage, extra?: MessageExtraInfo) => {
      if (!('id' in message) || !('method' in message)) return;
      if (message.method === 'initialize')
        void transport.send({ jsonrpc: '2.0', id: message.id, result: { protocolVersion: '2025-11-25' } });
      else closeStream = extra?.closeSSEStream;
    };
    await transport.start();
    server = createServer((req, res) => void transport.handleRequest(req, res));
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const init = await fetch(url, {
      method: 'POST',
      headers,
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      }),
    });
    await init.text();
    const session = { ...headers, 'mcp-session-id': 'session-1' };
    const call = await fetch(url, {
      method: 'POST',
      headers: session,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x' } }),
    });
    expect(closeStream).toBeTypeOf('function');
    closeStream!();
    // Ended cleanly (the body completes, no reset), with only the priming event and its retry.
    const primed = await call.text();
    expect(primed).toMatch(/^id: [A-Za-z0-9_-]{16}:0\nretry: \d+\ndata: \n\n$/);
    await transport.send({ jsonrpc: '2.0', id: 1, result: { content: [] } }, { relatedRequestId: 1 });
    const lastEventId = /^id: (\S+)/.exec(primed)![1]!;
    const resumed = await fetch(url, { headers: { ...session, 'last-event-id': lastEventId } });
    expect(resumed.status).toBe(200);
    expect(await resumed.text()).toMatch(
      /^event: message\nid: \S+:1\ndata: \{"jsonrpc":"2.0","id":1,"result"/,
    );
    await transport.close();
  });
});
