import { createServer as createNetServer, type Socket } from 'node:net';
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

/**
 * Cases found by a second, adversarial reading of the proxy: each broke it (a crash, an
 * unchecked second request, a misleading log line, a lost half-close) before its fix.
 */
let dns: TestDns;
let proxy: ProxyProcess;
let origin: Awaited<ReturnType<typeof startOrigin>>;

/** An origin that answers every request with a fixed raw response and records what it got. */
async function startRawOrigin(answer: string) {
  const received: string[] = [];
  const sockets = new Set<Socket>();
  const server = createNetServer((socket) => {
    sockets.add(socket);
    let data = '';
    socket.on('error', () => {});
    socket.on('data', (chunk) => {
      data += chunk.toString();
      received.push(data);
      if (data.includes('\r\n\r\n')) socket.end(answer);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as { port: number }).port,
    received,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

beforeAll(async () => {
  dns = await new TestDns().start();
  origin = await startOrigin();
  proxy = await startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    `ok.test:${origin.port}`,
    '--resolve',
    'ok.test=127.0.0.1',
  ]);
});
afterAll(async () => {
  await proxy?.stop();
  await origin?.close();
  await dns?.stop();
});

async function proxyFor(origin: number, extra: string[] = []) {
  return startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    `raw.test:${origin}`,
    '--resolve',
    'raw.test=127.0.0.1',
    ...extra,
  ]);
}

describe('an origin cannot crash the proxy with its status line', () => {
  it.each([
    ['status 000', 'HTTP/1.1 000 Zero\r\nContent-Length: 2\r\n\r\nok'],
    ['status 099', 'HTTP/1.1 099 Low\r\nContent-Length: 2\r\n\r\nok'],
    ['a DEL in the reason phrase', 'HTTP/1.1 200 O\u007fK\r\nContent-Length: 2\r\n\r\nok'],
  ])('%s: 502 for that request, and the proxy keeps serving', async (_label, answer) => {
    const bad = await startRawOrigin(answer);
    const p = await proxyFor(bad.port);
    try {
      const response = await rawExchange(
        p.port,
        `GET http://raw.test:${bad.port}/ HTTP/1.1\r\nHost: raw.test:${bad.port}\r\n\r\n`,
      );
      if (answer.includes('\u007f')) expect([200, 502]).toContain(statusOf(response));
      else expect(statusOf(response)).toBe(502);
      expect(p.proc.exitCode).toBeNull();
      const again = await rawExchange(
        p.port,
        `GET http://raw.test:${bad.port}/ HTTP/1.1\r\nHost: raw.test:${bad.port}\r\n\r\n`,
      );
      expect(statusOf(again)).toBeGreaterThan(0);
      expect(p.proc.exitCode).toBeNull();
    } finally {
      await p.stop();
      bad.close();
    }
  });
});

describe('Connection cannot strip framing or Host', () => {
  it.each(['content-length', 'transfer-encoding', 'host', 'Keep-Alive, Content-Length'])(
    'Connection: %s → 400, nothing forwarded',
    async (named) => {
      const before = origin.seen.length;
      const body = 'GET /internal-admin HTTP/1.1\r\nHost: other-vhost.example\r\n\r\n';
      const response = await rawExchange(
        proxy.port,
        `GET http://ok.test:${origin.port}/first HTTP/1.1\r\nHost: ok.test:${origin.port}\r\nConnection: ${named}\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
      );
      expect(statusOf(response)).toBe(400);
      expect(origin.seen.length).toBe(before);
      await proxy.waitForLine((l) => l.reason === 'bad-connection-header');
    },
  );
});

describe('logging what was sent', () => {
  it('a body that reached the origin is logged as allowed even when the client leaves before the answer', async () => {
    const silent = createNetServer((socket) => {
      socket.on('error', () => {});
      socket.on('data', () => {});
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const port = (silent.address() as { port: number }).port;
    const p = await proxyFor(port);
    try {
      const client = await RawClient.open(p.port);
      client.send(
        `POST http://raw.test:${port}/exfil HTTP/1.1\r\nHost: raw.test:${port}\r\nContent-Length: 11\r\n\r\nsecret-data`,
      );
      await new Promise((resolve) => setTimeout(resolve, 500));
      client.close();
      const line = await p.waitForLine((l) => l.host === 'raw.test' && l.event === 'egress');
      expect(line.allowed).toBe(true);
    } finally {
      await p.stop();
      silent.close();
    }
  });

  it('an Expect other than 100-continue is refused and logged', async () => {
    const response = await rawExchange(
      proxy.port,
      `GET http://ok.test:${origin.port}/ HTTP/1.1\r\nHost: ok.test:${origin.port}\r\nExpect: something-else\r\n\r\n`,
    );
    expect(statusOf(response)).toBe(417);
    await proxy.waitForLine((l) => l.reason === 'expectation-refused');
  });
});

describe('tunnels', () => {
  it('a FIN sent together with the CONNECT reaches the origin', async () => {
    let sawEnd = false;
    const echo = createNetServer({ allowHalfOpen: true }, (socket) => {
      socket.on('error', () => {});
      socket.on('data', () => {});
      socket.on('end', () => {
        sawEnd = true;
        socket.end();
      });
    });
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const port = (echo.address() as { port: number }).port;
    const p = await proxyFor(port);
    try {
      const client = await RawClient.open(p.port);
      client.socket.end(`CONNECT raw.test:${port} HTTP/1.1\r\nHost: raw.test:${port}\r\n\r\nhello`);
      const deadline = Date.now() + 10_000;
      while (!sawEnd && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
      expect(sawEnd).toBe(true);
    } finally {
      await p.stop();
      echo.close();
    }
  });
});
