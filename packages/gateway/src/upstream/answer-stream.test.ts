import { createServer, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamError } from '../ports/errors.js';
import { type AnswerStreamEnd, watchAnswerStream } from './answer-stream.js';
import { guardedFetch } from './remote.js';

const enc = (text: string) => new TextEncoder().encode(text);
const message = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const progress = message({
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: 1 },
});
const answer = message({ jsonrpc: '2.0', id: 3, result: { content: [] } });

/** Feed `chunks` (then end, or fail with `error`) through the watcher; collect what it passed on. */
async function watch(chunks: string[], error?: Error) {
  const ends: AnswerStreamEnd[] = [];
  const queue = [...chunks];
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = queue.shift();
      if (chunk !== undefined) controller.enqueue(enc(chunk));
      else if (error) controller.error(error);
      else controller.close();
    },
  });
  let passed = '';
  let failure: unknown;
  try {
    passed = await new Response(watchAnswerStream(body, (end) => ends.push(end))).text();
  } catch (caught) {
    failure = caught;
  }
  return { ends, passed, failure };
}

describe('watchAnswerStream', () => {
  it('passes the bytes on unchanged and reports the answer, whatever the line endings and chunking', async () => {
    const stream = `: hello\r\nretry: 1000\r\n${progress.replace(/\n/g, '\r\n')}event: other\ndata: not json, not ours\n\n${answer}`;
    for (const size of [1, 2, 7, stream.length]) {
      const chunks: string[] = [];
      for (let i = 0; i < stream.length; i += size) chunks.push(stream.slice(i, i + size));
      const { ends, passed, failure } = await watch(chunks);
      expect(failure).toBeUndefined();
      expect(passed).toBe(stream);
      expect(ends).toEqual([{ kind: 'answered' }]);
    }
  });

  it.each([
    [
      'a line that is no event field',
      `${progress}hello world\n`,
      /a line that is not an event field \("hello /,
    ],
    [
      'binary garbage, before any line ends',
      '\u0000\u0001\u0002garbage',
      /a line that is not an event field/,
    ],
    ['an HTML error page', '<html><body>502 Bad Gateway', /a line that is not an event field \("<html>/],
    ['data that is not JSON', 'data: {not json\n\n', /an event whose data is not JSON/],
    ['JSON that is not JSON-RPC', 'data: {"hello":1}\n\n', /an event that is not a JSON-RPC message/],
  ])('fails the stream at once on %s', async (_what, stream, problem) => {
    const { ends, failure } = await watch([stream]);
    expect(failure).toMatchObject({ code: 'UPSTREAM_MALFORMED', message: expect.stringMatching(problem) });
    expect(ends).toHaveLength(1);
    expect(ends[0]).toMatchObject({ kind: 'broken', error: failure });
  });

  it('a stream that ends without the answer is broken, unless an event id makes it resumable', async () => {
    expect((await watch([progress])).ends).toEqual([
      {
        kind: 'broken',
        error: expect.objectContaining({
          code: 'UPSTREAM_LOST',
          message: expect.stringMatching(/^the server ended its answer stream before it answered/),
        }),
      },
    ]);
    expect((await watch([`id: 7\ndata:\n\n${progress}`])).ends).toEqual([
      { kind: 'resumable', lastEventId: '7' },
    ]);
  });

  it('a connection that drops before the answer is broken, and after it is not', async () => {
    const dropped = Object.assign(new TypeError('terminated'), { cause: { code: 'UND_ERR_SOCKET' } });
    expect((await watch([progress], dropped)).ends).toEqual([
      {
        kind: 'broken',
        error: expect.objectContaining({
          code: 'UPSTREAM_LOST',
          message:
            'the connection to the server dropped (UND_ERR_SOCKET) before it answered; the call was ended',
        }),
      },
    ]);
    expect((await watch([answer], dropped)).ends).toEqual([{ kind: 'answered' }]);
  });

  it('stays linear on a flood of short lines', async () => {
    const { ends } = await watch([`${':\n'.repeat(200_000)}${'\r'.repeat(200_000)}${answer}`]);
    expect(ends).toEqual([{ kind: 'answered' }]);
  });
});

describe('guardedFetch: the answer stream of a call', () => {
  const servers: ReturnType<typeof createServer>[] = [];
  afterEach(() => {
    for (const server of servers.splice(0)) server.close();
  });
  async function serve(handler: (res: ServerResponse, method: string) => void) {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => handler(res, req.method ?? ''));
    });
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as { port: number }).port}/mcp`;
  }
  const callBody = (token: string) =>
    JSON.stringify({
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'x', _meta: { progressToken: token } },
    });

  it('names the call whose stream the server dropped', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(progress);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    const broken: [string, UpstreamError][] = [];
    const fetch = guardedFetch({ maxAnswerBytes: 1 << 20, onCallBroken: (t, e) => broken.push([t, e]) });
    const response = await fetch(url, { method: 'POST', body: callBody('rf-abc') });
    await expect(response.text()).rejects.toThrow();
    expect(broken).toHaveLength(1);
    expect(broken[0]?.[0]).toBe('rf-abc');
    expect(broken[0]?.[1].message).toMatch(/^the connection to the server dropped \(.+\) before it answered/);
  });

  it('watches nothing but calls: no token, no report', async () => {
    const url = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(progress);
    });
    const broken: string[] = [];
    const fetch = guardedFetch({ maxAnswerBytes: 1 << 20, onCallBroken: (t) => broken.push(t) });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    await (await fetch(url, { method: 'POST', body })).text();
    expect(broken).toEqual([]);
  });

  it('a resumable stream whose resumption fails ends its call', async () => {
    const url = await serve((res, method) => {
      if (method === 'GET') return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(`id: 9\ndata:\n\n${progress}`);
    });
    const broken: [string, UpstreamError][] = [];
    const fetch = guardedFetch({ maxAnswerBytes: 1 << 20, onCallBroken: (t, e) => broken.push([t, e]) });
    await (await fetch(url, { method: 'POST', body: callBody('rf-res') })).text();
    expect(broken).toEqual([]);
    await fetch(url, { method: 'GET', headers: { 'last-event-id': '9' } });
    expect(broken.map(([t, e]) => [t, e.message])).toEqual([
      ['rf-res', 'the server refused to resume the answer stream (HTTP 404); the call was ended'],
    ]);
  });
});
