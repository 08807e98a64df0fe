import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import {
  type ProxyProcess,
  RawClient,
  rawExchange,
  startOrigin,
  startProxy,
  statusOf,
} from '../__fixtures__/harness.js';

let dns: TestDns;
let origin: Awaited<ReturnType<typeof startOrigin>>;
let proxy: ProxyProcess;
let ok: string;

beforeAll(async () => {
  dns = await new TestDns().start();
  origin = await startOrigin((req, res) => {
    if (req.url === '/redirect') {
      res.writeHead(302, { Location: 'http://169.254.169.254/latest/meta-data/' });
      return res.end();
    }
    if (req.url === '/hop') {
      res.writeHead(200, {
        Connection: 'X-Origin-Private',
        'X-Origin-Private': 'secret',
        'Keep-Alive': 'timeout=77',
      });
      return res.end('hop');
    }
    res.setHeader('Content-Type', 'text/plain');
    res.end(`origin saw ${req.method} ${req.url}`);
  });
  ok = `ok.test:${origin.port}`;
  proxy = await startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    ok,
    '--allow',
    `*.wild.test:${origin.port}`,
    '--resolve',
    'ok.test=127.0.0.1',
    '--resolve',
    'a.wild.test=127.0.0.1',
    '--resolve',
    'a.b.wild.test=127.0.0.1',
    '--resolve',
    'wild.test=127.0.0.1',
    '--resolve',
    'badwild.test=127.0.0.1',
    '--resolve',
    'evilok.test=127.0.0.1',
    '--resolve',
    'ok.test.evil.test=127.0.0.1',
  ]);
});

afterAll(async () => {
  await proxy?.stop();
  await origin?.close();
  dns?.stop();
});

const get = (authority: string, path = '/', extra = '') =>
  `GET http://${authority}${path} HTTP/1.1\r\nHost: ${authority}\r\n${extra}\r\n`;

function originCountAfter(before: number): number {
  return origin.seen.length - before;
}

describe('plain-HTTP forwarding', () => {
  it('forwards an allowed request and passes the body back', async () => {
    const res = await rawExchange(proxy.port, get(ok, '/hello'));
    expect(statusOf(res)).toBe(200);
    expect(res).toContain('origin saw GET /hello');
  });

  it('matches names case-insensitively with one trailing dot', async () => {
    const authority = `OK.Test.:${origin.port}`;
    const res = await rawExchange(proxy.port, get(authority));
    expect(statusOf(res)).toBe(200);
  });

  it.each([
    [`a.wild.test`, 200],
    [`a.b.wild.test`, 200],
    [`wild.test`, 403],
    [`badwild.test`, 403],
    [`evilok.test`, 403],
    [`ok.test.evil.test`, 403],
  ])('wildcard and suffix matching: %s -> %d', async (host, expected) => {
    const res = await rawExchange(proxy.port, get(`${host}:${origin.port}`));
    expect(statusOf(res)).toBe(expected);
  });

  it('userinfo in the authority (ok.test@evil.test) is refused', async () => {
    const before = origin.seen.length;
    const res = await rawExchange(proxy.port, get(`ok.test@evil.test:${origin.port}`));
    expect(statusOf(res)).toBe(400);
    expect(originCountAfter(before)).toBe(0);
  });

  it('an allowed name on another port is refused, and a bare name means ports 80/443 only', async () => {
    const res = await rawExchange(proxy.port, get(`ok.test:${origin.port + 1}`));
    expect(statusOf(res)).toBe(403);
    const line = await proxy.waitForLine((l) => l['port'] === origin.port + 1);
    expect(line['reason']).toBe('port-not-allowed');
  });

  it.each(['0', '65536', '+80', ''])('an invalid port (%s) is 400', async (port) => {
    const res = await rawExchange(proxy.port, get(`ok.test:${port}`));
    expect(statusOf(res)).toBe(400);
  });

  it('a Host header naming another host is 400 and nothing is sent', async () => {
    const before = origin.seen.length;
    const res = await rawExchange(
      proxy.port,
      `GET http://${ok}/ HTTP/1.1\r\nHost: evil.test:${origin.port}\r\n\r\n`,
    );
    expect(statusOf(res)).toBe(400);
    expect(originCountAfter(before)).toBe(0);
  });

  it('a duplicate Host header is 400', async () => {
    const res = await rawExchange(
      proxy.port,
      `GET http://${ok}/ HTTP/1.1\r\nHost: ${ok}\r\nHost: ${ok}\r\n\r\n`,
    );
    expect(statusOf(res)).toBe(400);
    expect((await proxy.waitForLine((l) => l['reason'] === 'duplicate-host'))['status']).toBe(400);
  });

  it('a missing Host header is 400', async () => {
    const res = await rawExchange(proxy.port, `GET http://${ok}/ HTTP/1.1\r\n\r\n`);
    expect(statusOf(res)).toBe(400);
  });

  it.each([
    'GET / HTTP/1.1\r\nHost: ok.test\r\n\r\n',
    'GET https://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n\r\n',
    'OPTIONS * HTTP/1.1\r\nHost: ok.test\r\n\r\n',
  ])('a non-proxy request is 400: %j', async (text) => {
    const res = await rawExchange(proxy.port, text);
    expect(statusOf(res)).toBe(400);
  });

  it.each([
    [
      'Content-Length and Transfer-Encoding',
      'Content-Length: 4\r\nTransfer-Encoding: chunked\r\n',
      '0\r\n\r\n',
    ],
    ['two Content-Lengths', 'Content-Length: 4\r\nContent-Length: 5\r\n', 'abcd'],
    ['Transfer-Encoding not ending in chunked', 'Transfer-Encoding: chunked, identity\r\n', '0\r\n\r\n'],
    ['an obfuscated Transfer-Encoding', 'Transfer-Encoding: xchunked\r\n', '0\r\n\r\n'],
    ['whitespace before the colon', 'Transfer-Encoding : chunked\r\n', '0\r\n\r\n'],
    ['a header folded over two lines', 'X-Folded: a\r\n b\r\nContent-Length: 0\r\n', ''],
    ['a bad chunk size', 'Transfer-Encoding: chunked\r\n', 'zz\r\nabc\r\n0\r\n\r\n'],
  ])('smuggling framing is refused: %s', async (_name, headers, body) => {
    const before = origin.seen.length;
    const res = await rawExchange(
      proxy.port,
      `POST http://${ok}/smuggle HTTP/1.1\r\nHost: ${ok}\r\n${headers}\r\n${body}GET http://${ok}/second HTTP/1.1\r\nHost: ${ok}\r\n\r\n`,
    );
    expect(statusOf(res)).toBe(400);
    await new Promise((r) => setTimeout(r, 100));
    expect(origin.seen.filter((s) => s.url === '/second')).toHaveLength(0);
    expect(originCountAfter(before)).toBe(0);
  });

  it.each([
    'Connection: Upgrade\r\nUpgrade: websocket\r\n',
    'Connection: Upgrade, HTTP2-Settings\r\nUpgrade: h2c\r\nHTTP2-Settings: AAMAAABkAAQCAAAAAAIAAAAA\r\n',
    'Upgrade: websocket\r\n',
  ])('an upgrade is refused: %j', async (headers) => {
    const before = origin.seen.length;
    const res = await rawExchange(proxy.port, get(ok, '/ws', headers));
    expect(statusOf(res)).toBe(400);
    expect(originCountAfter(before)).toBe(0);
  });

  it('strips hop-by-hop headers and those named in Connection, both ways', async () => {
    const before = origin.seen.length;
    const res = await rawExchange(
      proxy.port,
      get(
        ok,
        '/hop',
        'Connection: keep-alive, X-Client-Private\r\nX-Client-Private: secret\r\nKeep-Alive: 5\r\n' +
          'Proxy-Authorization: Basic Zm9vOmJhcg==\r\nTE: trailers\r\nProxy-Connection: keep-alive\r\nX-Kept: yes\r\n',
      ),
    );
    expect(statusOf(res)).toBe(200);
    expect(originCountAfter(before)).toBe(1);
    const sent = (origin.seen.at(-1)?.rawHeaders ?? [])
      .filter((_, i) => i % 2 === 0)
      .map((h) => h.toLowerCase());
    expect(sent).toContain('x-kept');
    for (const h of ['x-client-private', 'keep-alive', 'proxy-authorization', 'te', 'proxy-connection']) {
      expect(sent).not.toContain(h);
    }
    expect(res.toLowerCase()).not.toContain('x-origin-private');
    expect(res.toLowerCase()).not.toContain('timeout=77');
  });

  it('passes a redirect back and does not follow it', async () => {
    const before = proxy.lines.length;
    const res = await rawExchange(proxy.port, get(ok, '/redirect'));
    expect(statusOf(res)).toBe(302);
    expect(res).toContain('Location: http://169.254.169.254/latest/meta-data/');
    await new Promise((r) => setTimeout(r, 200));
    const after = proxy.lines.slice(before);
    expect(after).toHaveLength(1);
    expect(after[0]?.['host']).toBe('ok.test');
  });

  it('re-checks every request on a keep-alive connection', async () => {
    const client = await RawClient.open(proxy.port);
    client.send(get(ok, '/first'));
    await client.until((d) => d.includes('origin saw GET /first'));
    expect(client.closed).toBe(false);
    client.data = '';
    const denied = `denied.test:${origin.port}`;
    client.send(`GET http://${denied}/second HTTP/1.1\r\nHost: ${denied}\r\n\r\n`);
    const second = await client.until((d) => d.includes('\r\n\r\n'));
    client.close();
    expect(statusOf(second)).toBe(403);
    expect(origin.seen.some((s) => s.url === '/second')).toBe(false);
  });

  it('forwards a request body intact', async () => {
    const body = 'x'.repeat(100_000);
    const client = await RawClient.open(proxy.port);
    client.send(
      `POST http://${ok}/upload HTTP/1.1\r\nHost: ${ok}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
    );
    await client.until((d) => d.includes('origin saw POST /upload'));
    client.close();
    expect(origin.seen.find((s) => s.url === '/upload')?.body.length).toBe(body.length);
  });
});
