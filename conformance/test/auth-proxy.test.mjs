// The bearer-token proxy must add the token and otherwise be transparent: the suite's verdict on
// the gateway (DNS rebinding included) must be the gateway's, not the proxy's.
import { createServer, request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { startAuthProxy, upstreamHeaders } from '../lib/auth-proxy.mjs';

describe('upstreamHeaders', () => {
  const rewrite = (headers) => upstreamHeaders(headers, { token: 't0k', proxyPort: 4000, targetPort: 5000 });

  it('sets the bearer token, replacing one the client sent', () => {
    expect(rewrite({ host: '127.0.0.1:4000' }).authorization).toBe('Bearer t0k');
    expect(rewrite({ host: '127.0.0.1:4000', authorization: 'Bearer other' }).authorization).toBe(
      'Bearer t0k',
    );
  });

  it('moves a Host or Origin that names the proxy to the target, keeping the hostname', () => {
    expect(rewrite({ host: '127.0.0.1:4000', origin: 'http://127.0.0.1:4000' })).toMatchObject({
      host: '127.0.0.1:5000',
      origin: 'http://127.0.0.1:5000',
    });
    expect(rewrite({ host: 'localhost:4000' }).host).toBe('localhost:5000');
    expect(rewrite({ host: '[::1]:4000' }).host).toBe('[::1]:5000');
  });

  it('passes any other Host or Origin through unchanged, for the gateway to judge', () => {
    const foreign = rewrite({ host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(foreign).toMatchObject({ host: 'evil.example.com', origin: 'http://evil.example.com' });
    expect(rewrite({ host: '127.0.0.1:4001' }).host).toBe('127.0.0.1:4001');
    expect(rewrite({ host: 'x', origin: 'https://127.0.0.1:4000' }).origin).toBe('https://127.0.0.1:4000');
    expect(rewrite({ host: 'x', origin: 'null' }).origin).toBe('null');
  });

  it('drops hop-by-hop headers and keeps the rest', () => {
    const out = rewrite({
      host: 'h',
      connection: 'keep-alive',
      'keep-alive': 'timeout=5',
      'transfer-encoding': 'chunked',
      'mcp-session-id': 's1',
      'last-event-id': 'e1',
      accept: 'text/event-stream',
    });
    expect(out).toEqual({
      host: 'h',
      'mcp-session-id': 's1',
      'last-event-id': 'e1',
      accept: 'text/event-stream',
      authorization: 'Bearer t0k',
    });
  });
});

describe('startAuthProxy', () => {
  const stops = [];
  afterEach(async () => {
    for (const stop of stops.splice(0).reverse()) await stop();
  });

  async function upstream(handler) {
    const server = createServer(handler);
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    stops.push(
      () =>
        new Promise((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );
    return { server, url: `http://127.0.0.1:${server.address().port}/mcp` };
  }

  async function proxyTo(url) {
    const proxy = await startAuthProxy({ target: url, token: 'secret' });
    stops.push(() => proxy.close());
    return proxy;
  }

  it('forwards method, path, body and headers with the token, and the answer as it is', async () => {
    let seen;
    const up = await upstream((req, res) => {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        seen = { method: req.method, url: req.url, headers: req.headers, body };
        res.writeHead(202, { 'mcp-session-id': 'abc', 'content-type': 'application/json' });
        res.end('{"ok":true}');
      });
    });
    const proxy = await proxyTo(up.url);
    const answer = await fetch(`${proxy.url}?x=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'mcp-session-id': 'abc' },
      body: '{"jsonrpc":"2.0"}',
    });
    expect(answer.status).toBe(202);
    expect(answer.headers.get('mcp-session-id')).toBe('abc');
    expect(await answer.text()).toBe('{"ok":true}');
    expect(seen).toMatchObject({ method: 'POST', url: '/mcp?x=1', body: '{"jsonrpc":"2.0"}' });
    expect(seen.headers).toMatchObject({
      authorization: 'Bearer secret',
      'mcp-session-id': 'abc',
      host: `127.0.0.1:${new URL(up.url).port}`,
    });
  });

  it('streams an event stream as it comes, and closes the upstream request when the client leaves', async () => {
    let upstreamClosed;
    const closed = new Promise((resolve) => {
      upstreamClosed = resolve;
    });
    const up = await upstream((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      // Never ended by the server: only the client leaving may end it.
      req.on('close', () => upstreamClosed(true));
    });
    const proxy = await proxyTo(up.url);
    const controller = new AbortController();
    const answer = await fetch(proxy.url, { signal: controller.signal });
    const reader = answer.body.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value)).toBe('data: first\n\n');
    controller.abort();
    expect(await closed).toBe(true);
  });

  it('passes on the head of an event stream before its first event (a quiet GET stream must open)', async () => {
    const up = await upstream((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.flushHeaders();
    });
    const proxy = await proxyTo(up.url);
    const controller = new AbortController();
    const answer = await fetch(proxy.url, { signal: controller.signal });
    expect(answer.headers.get('content-type')).toBe('text/event-stream');
    controller.abort();
  });

  it('answers 502 with the reason when the target does not answer', async () => {
    const up = await upstream(() => {});
    const url = up.url;
    await stops.pop()();
    const proxy = await proxyTo(url);
    const answer = await fetch(proxy.url);
    expect(answer.status).toBe(502);
    expect(await answer.text()).toMatch(
      /^conformance auth proxy: http:\/\/127\.0\.0\.1:\d+\/mcp did not answer/,
    );
  });

  it('hands a foreign Host to the target unchanged', async () => {
    let host;
    const up = await upstream((req, res) => {
      host = req.headers.host;
      res.writeHead(403).end();
    });
    const proxy = await proxyTo(up.url);
    const status = await new Promise((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port: proxy.port, path: '/mcp', headers: { host: 'evil.example.com' } },
        (res) => {
          res.resume();
          resolve(res.statusCode);
        },
      );
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
    expect(host).toBe('evil.example.com');
  });
});
