import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { UpstreamError } from '../ports/errors.js';
import { HttpStatusError } from './http-endpoint.js';
import { HttpClientTransport, type HttpTransportOptions } from './http-transport.js';

const servers: Server[] = [];
const transports: HttpClientTransport[] = [];
afterEach(async () => {
  for (const transport of transports.splice(0)) await transport.close();
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

interface Seen {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server on loopback; `handler` answers each request once its body is read. */
async function serve(handler: (res: ServerResponse, seen: Seen, count: number) => void) {
  const requests: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const seen = { method: req.method ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() };
      requests.push(seen);
      handler(res, seen, requests.length);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`), requests };
}

function open(url: URL, options: Partial<HttpTransportOptions> = {}) {
  const broken: [string, UpstreamError][] = [];
  const messages: JSONRPCMessage[] = [];
  const errors: Error[] = [];
  const transport = new HttpClientTransport(url, {
    maxAnswerBytes: 1 << 20,
    onCallBroken: (token, error) => broken.push([token, error]),
    reconnection: { initialDelayMs: 10, maxDelayMs: 50, growFactor: 1, maxRetries: 2 },
    ...options,
  });
  transport.onmessage = (message) => messages.push(message);
  transport.onerror = (error) => errors.push(error);
  transports.push(transport);
  return { transport, broken, messages, errors };
}

const sse = (value: unknown, id?: string) => `${id ? `id: ${id}\n` : ''}data: ${JSON.stringify(value)}\n\n`;
const progress = (message = 'working') => ({
  jsonrpc: '2.0' as const,
  method: 'notifications/progress',
  params: { progressToken: 'rf-1', progress: 1, message },
});
const answer = (id: number) => ({ jsonrpc: '2.0' as const, id, result: { content: [] } });
const call = (id: number, token = 'rf-1'): JSONRPCMessage => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params: { name: 'x', arguments: {}, _meta: { progressToken: token } },
});
const list = (id: number): JSONRPCMessage => ({ jsonrpc: '2.0', id, method: 'tools/list', params: {} });
const until = (check: () => boolean) => expect.poll(check, { timeout: 5_000, interval: 5 }).toBe(true);

describe('HttpClientTransport: the wire', () => {
  it('a request may add only Mcp-Param-* headers, never override the credential, session or version', async () => {
    const { url, requests } = await serve((res, seen) => {
      const message = JSON.parse(seen.body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
      res.end(JSON.stringify(answer(message.id)));
    });
    const { transport } = open(url, { headers: { Authorization: 'Bearer t0k' } });
    await transport.start();
    await transport.send(list(1));
    const modern: JSONRPCMessage = {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'x', _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    };
    await transport.send(modern, {
      headers: {
        authorization: 'Bearer stolen',
        'mcp-session-id': 'other',
        'mcp-protocol-version': '1999-01-01',
        'mcp-name': 'y',
        'content-type': 'text/plain',
        'Mcp-Param-Region': 'eu-1',
        'mcp-param-bad': 'a\r\nx-evil: 1',
        'mcp-param-bad name': 'v',
      },
    });
    const sent = requests[1]!.headers;
    expect(sent).toMatchObject({
      authorization: 'Bearer t0k',
      'mcp-session-id': 'sess-1',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': 'tools/call',
      'mcp-name': 'x',
      'content-type': 'application/json',
      'mcp-param-region': 'eu-1',
    });
    expect(sent['mcp-param-bad']).toBeUndefined();
    expect(sent['x-evil']).toBeUndefined();
  });

  it('passes a W3C traceparent header on only in its exact form', async () => {
    const { url, requests } = await serve((res, seen) => {
      const message = JSON.parse(seen.body) as { id: number };
      res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
      res.end(JSON.stringify(answer(message.id)));
    });
    const { transport } = open(url);
    await transport.start();
    const trace = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
    await transport.send(list(1), { headers: { traceparent: trace } });
    await transport.send(list(2), { headers: { traceparent: `${trace}\r\nx-evil: 1` } });
    await transport.send(list(3), { headers: { Traceparent: trace, tracestate: 'a=b' } });
    expect(requests.map((r) => r.headers.traceparent)).toEqual([trace, undefined, undefined]);
    expect(requests.map((r) => r.headers.tracestate)).toEqual([undefined, undefined, undefined]);
    expect(requests[1]!.headers['x-evil']).toBeUndefined();
  });

  it('sends the headers the SDK sends, keeps the session id, and answers 202 and JSON alike', async () => {
    const { url, requests } = await serve((res, seen) => {
      const message = JSON.parse(seen.body || '{}') as { method?: string; id?: number };
      if (seen.method === 'GET') return res.writeHead(405).end();
      if (message.id === undefined) return res.writeHead(202).end();
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'mcp-session-id': 'sess-1' });
      res.end(JSON.stringify(answer(message.id)));
    });
    const { transport, messages, errors } = open(url, {
      headers: { Authorization: 'Bearer t0k', ACCEPT: 'x/y' },
    });
    await transport.start();
    await transport.send(list(1));
    expect(transport.sessionId).toBe('sess-1');
    transport.setProtocolVersion('2025-06-18');
    await transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    await until(() => requests.length === 3);
    expect(messages).toEqual([answer(1)]);
    const [first, second, get] = requests;
    expect(first?.headers).toMatchObject({
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: 'Bearer t0k',
      'content-length': String(first?.body.length),
    });
    expect(first?.headers['mcp-session-id']).toBeUndefined();
    expect(second?.headers).toMatchObject({
      'mcp-session-id': 'sess-1',
      'mcp-protocol-version': '2025-06-18',
    });
    // After initialisation the session's GET stream is asked for; 405 (none offered) is no error.
    expect(get).toMatchObject({
      method: 'GET',
      headers: { accept: 'text/event-stream', 'mcp-session-id': 'sess-1' },
    });
    expect(errors).toEqual([]);
    await transport.terminateSession();
    expect(requests.at(-1)).toMatchObject({ method: 'DELETE', headers: { 'mcp-session-id': 'sess-1' } });
    expect(transport.sessionId).toBeUndefined();
  });

  it('reuses one connection for requests one after another', async () => {
    const sockets = new Set<unknown>();
    const { url } = await serve((res, seen) => {
      sockets.add(res.socket);
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(sse(answer((JSON.parse(seen.body) as { id: number }).id)));
    });
    const { transport, messages } = open(url);
    for (let id = 1; id <= 5; id++) {
      await transport.send(list(id));
      await until(() => messages.length === id);
    }
    expect(sockets.size).toBe(1);
  });

  it('refuses a redirect instead of following it, naming the status, the target and how to register it there', async () => {
    const { url, requests } = await serve((res) =>
      res.writeHead(307, { location: 'http://127.0.0.1:1/elsewhere' }).end(),
    );
    const { transport } = open(url, { server: 'docs' });
    await expect(transport.send(list(1))).rejects.toMatchObject({
      code: 'UPSTREAM_REDIRECT',
      message:
        'the server answered 307 (redirect to http://127.0.0.1:1/elsewhere); redirects are not followed. If the server has moved there, register it at that address: ringfence mcp rm docs, then ringfence mcp add docs --url http://127.0.0.1:1/elsewhere (with the same --header options)',
    });
    expect(requests).toHaveLength(1);
  });

  it('names the absolute address of a relative redirect, and no command for a target that is no http(s) URL', async () => {
    const moved = await serve((res) => res.writeHead(308, { location: '/v2/mcp' }).end());
    const relative = open(moved.url);
    await expect(relative.transport.send(list(1))).rejects.toMatchObject({
      message: expect.stringContaining(`ringfence mcp add NAME --url ${new URL('/v2/mcp', moved.url).href} `),
    });
    const elsewhere = await serve((res) => res.writeHead(308, { location: 'ftp://127.0.0.1/x' }).end());
    const other = open(elsewhere.url);
    await expect(other.transport.send(list(1))).rejects.toMatchObject({
      message: 'the server answered 308 (redirect to ftp://127.0.0.1/x); redirects are not followed',
    });
  });

  it('gives a 404 as its status (the session expired), with what the server said', async () => {
    const { url } = await serve((res) => res.writeHead(404).end('Session not found'));
    const { transport } = open(url);
    const failure = await transport.send(list(1)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(HttpStatusError);
    expect(failure).toMatchObject({
      status: 404,
      message: 'the server answered HTTP 404 to a POST: Session not found',
    });
  });

  it('tells a server that cannot be reached from one that dropped the connection', async () => {
    const { url } = await serve((res) => res.socket?.destroy());
    const { transport } = open(url);
    await expect(transport.send(list(1))).rejects.toMatchObject({
      code: 'UPSTREAM_LOST',
      message: expect.stringMatching(
        /^the connection to the server dropped \(ECONNRESET\) before it answered$/,
      ),
    });
    const closed = new URL(url);
    servers[0]?.closeAllConnections();
    await new Promise((resolve) => servers.shift()?.close(resolve));
    const other = open(closed);
    await expect(other.transport.send(list(2))).rejects.toMatchObject({
      code: 'UPSTREAM_LOST',
      message: 'the server could not be reached (ECONNREFUSED)',
    });
  });
});

describe('HttpClientTransport: what an answer may be', () => {
  it('refuses a content type that is neither JSON nor an event stream', async () => {
    const { url } = await serve((res) =>
      res.writeHead(200, { 'content-type': 'text/html' }).end('<html>hi</html>'),
    );
    const { transport, messages } = open(url);
    await expect(transport.send(list(1))).rejects.toMatchObject({
      code: 'UPSTREAM_MALFORMED',
      message: 'the server answered with content type "text/html", neither JSON nor an event stream',
    });
    expect(messages).toEqual([]);
  });

  it.each([
    ['not JSON', '{"jsonrpc":"2.0",', "the server's answer is not JSON"],
    ['JSON but not JSON-RPC', '{"hello":1}', "the server's answer is not a JSON-RPC message"],
    [
      'JSON-RPC but not the answer',
      JSON.stringify(answer(99)),
      "the server's answer did not answer the request",
    ],
  ])('fails a request whose JSON answer is %s', async (_what, body, expected) => {
    const { url } = await serve((res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end(body),
    );
    const { transport } = open(url);
    await expect(transport.send(list(1))).rejects.toMatchObject({ message: expected });
  });

  it('refuses a JSON answer declared over the cap without reading it, and one that grows over it', async () => {
    const { url } = await serve((res, _seen, count) => {
      if (count === 1) {
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(2048) });
        return res.end('x'.repeat(2048));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 8; i++) res.write(' '.repeat(512));
      res.end(JSON.stringify(answer(2)));
    });
    const { transport } = open(url, { maxAnswerBytes: 1024 });
    await expect(transport.send(list(1))).rejects.toMatchObject({
      code: 'UPSTREAM_ANSWER_TOO_LARGE',
      message: "the server's answer is 2048 bytes, over the 1024-byte cap",
    });
    await expect(transport.send(list(2))).rejects.toMatchObject({
      code: 'UPSTREAM_ANSWER_TOO_LARGE',
      message: "the server's answer exceeded 1024 bytes; it was cut off",
    });
  });
});

describe('HttpClientTransport: the event stream answering a call', () => {
  it('passes progress and the answer on; the call is not reported broken', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(progress()));
      res.end(sse(answer(3)));
    });
    const { transport, messages, broken } = open(url);
    await transport.send(call(3));
    await until(() => messages.length === 2);
    expect(messages).toEqual([progress(), answer(3)]);
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(broken).toEqual([]);
  });

  it('ends the call whose stream the server dropped mid-way, naming it', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(progress()));
      res.write('data: {"jsonrpc":"2.0","id":3,"res');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { transport, broken, messages } = open(url);
    await transport.send(call(3, 'rf-abc'));
    await until(() => broken.length === 1);
    expect(broken[0]?.[0]).toBe('rf-abc');
    expect(broken[0]?.[1]).toMatchObject({
      code: 'UPSTREAM_LOST',
      message: 'the connection to the server dropped (ECONNRESET) before it answered; the call was ended',
    });
    expect(messages).toEqual([progress()]);
  });

  it('ends a call whose stream is garbled, at once', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(progress()));
      res.write('<html><body>502 Bad Gateway</body></html>\n');
      // The server never ends the stream: only the garbage can end the call now.
    });
    const { transport, broken } = open(url);
    await transport.send(call(3));
    await until(() => broken.length === 1);
    expect(broken[0]?.[1]).toMatchObject({
      code: 'UPSTREAM_MALFORMED',
      message: expect.stringMatching(
        /it sent a line that is not an event field \("<html>"\); the call was ended$/,
      ),
    });
  });

  it('ends a call whose stream goes over the cap, though each event is small', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (let i = 0; i < 40; i++) res.write(sse(progress('z'.repeat(1024))));
    });
    const { transport, broken } = open(url, { maxAnswerBytes: 16 * 1024 });
    await transport.send(call(3));
    await until(() => broken.length === 1);
    expect(broken[0]?.[1]).toMatchObject({
      code: 'UPSTREAM_ANSWER_TOO_LARGE',
      message: "the server's answer exceeded 16384 bytes; it was cut off",
    });
  });

  it('ends a call whose stream ended without the answer, or without its last blank line', async () => {
    const { url } = await serve((res, _seen, count) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end(count === 1 ? sse(progress()) : sse(answer(4)).trimEnd());
    });
    const { transport, broken } = open(url);
    await transport.send(call(3, 'rf-a'));
    await transport.send(call(4, 'rf-b'));
    await until(() => broken.length === 2);
    expect(broken.map(([token, error]) => [token, error.message])).toEqual(
      expect.arrayContaining(
        ['rf-a', 'rf-b'].map((token) => [
          token,
          'the server ended its answer stream before it answered; the call was ended',
        ]),
      ),
    );
  });

  it('resumes a stream that ended after an event id, with Last-Event-ID, and the answer then ends the call', async () => {
    const { url, requests } = await serve((res, seen) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (seen.method === 'POST') return res.end(sse(progress(), 'ev-1'));
      res.end(sse(answer(3), 'ev-2'));
    });
    const { transport, broken, messages } = open(url);
    await transport.send(call(3));
    await until(() => messages.length === 2);
    expect(requests[1]).toMatchObject({ method: 'GET', headers: { 'last-event-id': 'ev-1' } });
    expect(messages).toEqual([progress(), answer(3)]);
    expect(broken).toEqual([]);
  });

  it('ends the call when resuming is refused or the server keeps ending its stream with nothing new', async () => {
    const { url } = await serve((res, seen) => {
      const token = (JSON.parse(seen.body || '{}') as { params?: { _meta?: { progressToken?: string } } })
        .params?._meta?.progressToken;
      if (seen.method === 'GET' && seen.headers['last-event-id'] === 'refused')
        return res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (seen.method === 'POST')
        return res.end(`id: ${token === 'rf-refused' ? 'refused' : 'again'}\ndata:\n\n`);
      res.end(': nothing new\n\n');
    });
    const { transport, broken } = open(url);
    await transport.send(call(3, 'rf-refused'));
    await transport.send(call(4, 'rf-again'));
    await until(() => broken.length === 2);
    expect(Object.fromEntries(broken.map(([token, error]) => [token, error.message]))).toEqual({
      'rf-refused': 'the server refused to resume the answer stream (HTTP 404); the call was ended',
      'rf-again':
        'the server ended its answer stream 2 times in a row without sending anything; the call was ended',
    });
  });

  it('ends a request that is no call with an error answer when its stream breaks', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.end('data: {not json\n\n');
    });
    const { transport, broken, messages } = open(url);
    await transport.send(list(5));
    await until(() => messages.length === 1);
    expect(broken).toEqual([]);
    expect(messages[0]).toMatchObject({
      id: 5,
      error: { code: -32000, message: expect.stringMatching(/it sent an event whose data is not JSON/) },
    });
  });

  it('closing ends the streams still open without reporting their calls broken', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(progress()));
    });
    const { transport, broken, messages } = open(url);
    let closed = 0;
    transport.onclose = () => {
      closed += 1;
    };
    await transport.send(call(3));
    await until(() => messages.length === 1);
    await transport.close();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(broken).toEqual([]);
    expect(closed).toBe(1);
    await expect(transport.send(list(4))).rejects.toMatchObject({ code: 'UPSTREAM_CLOSED' });
  });
});

describe("HttpClientTransport: the session's GET stream", () => {
  async function initialized(
    handler: (res: ServerResponse, seen: Seen, count: number) => void,
    cap = 1 << 20,
  ) {
    const server = await serve((res, seen, count) => {
      if (seen.method === 'POST') return res.writeHead(202).end();
      handler(res, seen, count);
    });
    const opened = open(server.url, { maxAnswerBytes: cap });
    await opened.transport.send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    return { ...server, ...opened };
  }

  it('passes its messages on, however long it runs, and reopens it after the last event id when it ends', async () => {
    const { messages, requests } = await initialized((res, seen) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (seen.headers['last-event-id']) return res.write(sse(progress('again')));
      for (let i = 0; i < 40; i++) res.write(sse(progress('y'.repeat(512)), `e${i}`));
      res.end();
    }, 4096);
    await until(() => messages.length === 41);
    expect(requests.at(-1)?.headers['last-event-id']).toBe('e39');
  });

  it('drops an event over the cap, tells why, and does not ask for ever', async () => {
    const { errors, requests } = await initialized((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(`data: ${'x'.repeat(8192)}`);
    }, 4096);
    await until(() => errors.some((e) => /could not be reopened/.test(e.message)));
    expect(errors[0]).toMatchObject({ code: 'UPSTREAM_ANSWER_TOO_LARGE' });
    // The first opening, then as many reopenings as the retries allow: none of them brought anything.
    expect(requests.filter((r) => r.method === 'GET')).toHaveLength(2);
  });
});

/** A certificate for 127.0.0.1 from a CA of the test's own, or undefined without openssl. */
function testCertificate() {
  const dir = mkdtempSync(join(tmpdir(), 'rf-tls-'));
  try {
    execFileSync(
      'openssl',
      ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1']
        .concat(['-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem'), '-subj', '/CN=127.0.0.1'])
        .concat(['-addext', 'subjectAltName=IP:127.0.0.1']),
      { stdio: 'ignore' },
    );
    return { key: readFileSync(join(dir, 'key.pem')), cert: readFileSync(join(dir, 'cert.pem')) };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('HttpClientTransport: https', () => {
  const tls = testCertificate();
  it.skipIf(!tls)(
    'verifies the server certificate: refused when no trusted CA signed it, used when one did',
    async () => {
      const server = createHttpsServer({ key: tls!.key, cert: tls!.cert }, (req, res) => {
        req.resume();
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'application/json' });
          res.end(JSON.stringify(answer(1)));
        });
      });
      servers.push(server);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`);
      await expect(open(url).transport.send(list(1))).rejects.toMatchObject({
        code: 'UPSTREAM_LOST',
        message: expect.stringMatching(
          /^the server's TLS certificate was not accepted \(self-signed certificate\)/,
        ),
      });
      const trusted = open(url, { ca: tls!.cert });
      await trusted.transport.send(list(1));
      expect(trusted.messages).toEqual([answer(1)]);
    },
  );
});

describe('which call a server request belongs to', () => {
  const ask = (id: number) => ({ jsonrpc: '2.0' as const, id, method: 'elicitation/create', params: {} });

  it('a request on a call’s own answer stream is that call’s; an id used twice is nobody’s', async () => {
    const { url } = await serve((res, seen) => {
      const body = JSON.parse(seen.body) as { id: number; params?: { _meta?: { progressToken?: string } } };
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // Each call's stream carries a request of the server's: 7 on the first, 8 then 7 again on the second.
      if (body.params?._meta?.progressToken === 'rf-a') res.write(sse(ask(7)));
      else res.write(sse(ask(8)) + sse(ask(7)));
    });
    const { transport, messages } = open(url);
    await transport.send(call(1, 'rf-a'));
    await expect.poll(() => messages.length).toBe(1);
    expect(transport.callOf(7)).toBe('rf-a');
    await transport.send(call(2, 'rf-b'));
    await expect.poll(() => messages.length).toBe(3);
    expect(transport.callOf(8)).toBe('rf-b');
    // The server reused 7 on another call's stream: it can no longer be told whose it is.
    expect(transport.callOf(7)).toBeUndefined();
    // Our answer frees an id: the next request under it is attributed afresh.
    await transport.send({ jsonrpc: '2.0', id: 8, result: {} }).catch(() => {});
    expect(transport.callOf(8)).toBeUndefined();
    // An id never seen on a call's stream (a forged one) is nobody's.
    expect(transport.callOf(99)).toBeUndefined();
  });

  it('a request on a stream of no call (not a forwarded call: no progress token) is nobody’s', async () => {
    const { url } = await serve((res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(sse(ask(5)));
    });
    const { transport, messages } = open(url);
    await transport.send({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    await expect.poll(() => messages.length).toBe(1);
    expect(transport.callOf(5)).toBeUndefined();
  });
});
