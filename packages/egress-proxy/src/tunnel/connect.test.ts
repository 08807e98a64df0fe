import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import {
  openFds,
  openTunnel,
  type ProxyProcess,
  RawClient,
  rawExchange,
  startEcho,
  startProxy,
  statusOf,
  waitFor,
} from '../__fixtures__/harness.js';

let dns: TestDns;
let echo: Awaited<ReturnType<typeof startEcho>>;
let proxy: ProxyProcess;
let ok: string;

beforeAll(async () => {
  dns = await new TestDns().start();
  echo = await startEcho();
  ok = `ok.test:${echo.port}`;
  proxy = await startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    ok,
    '--resolve',
    'ok.test=127.0.0.1',
  ]);
});

afterAll(async () => {
  await proxy?.stop();
  await echo?.close();
  dns?.stop();
});

describe('CONNECT tunnels', () => {
  it('relays bytes both ways, including bytes sent with the CONNECT itself', async () => {
    const { status, client } = await openTunnel(proxy.port, ok, 'early-');
    expect(status).toBe(200);
    client.send('late');
    await client.until((d) => d === 'early-late');
    client.close();
  });

  it('a CONNECT without a port is 400', async () => {
    const { status, client } = await openTunnel(proxy.port, 'ok.test');
    client.close();
    expect(status).toBe(400);
  });

  it('half-close from the client: the origin still answers after the client ends', async () => {
    const { status, client } = await openTunnel(proxy.port, ok);
    expect(status).toBe(200);
    client.send('data');
    await client.until((d) => d === 'data');
    client.socket.end();
    // The echo origin writes BYE only after it sees our FIN; then it ends and so must we.
    await client.until((d) => d === 'dataBYE');
    await client.untilClosed();
    expect(client.ended).toBe(true);
  });

  it('half-close from the origin: the client can still send after the origin ends', async () => {
    const received: string[] = [];
    const origin = await startEcho((s) => {
      s.end('HELLO');
      s.on('data', (d) => received.push(d.toString()));
    });
    const p = await startProxy([
      '--dns-server',
      dns.server,
      '--allow-address',
      '127.0.0.0/8',
      '--allow',
      `ok.test:${origin.port}`,
      '--resolve',
      'ok.test=127.0.0.1',
    ]);
    try {
      const { status, client } = await openTunnel(p.port, `ok.test:${origin.port}`);
      expect(status).toBe(200);
      await client.until((d) => d === 'HELLO');
      await waitFor(() => (client.ended ? true : undefined), 10_000, 'the FIN to reach the client');
      client.send('after-fin');
      await waitFor(
        () => (received.join('') === 'after-fin' ? true : undefined),
        10_000,
        'the origin to get data',
      );
      client.close();
    } finally {
      await p.stop();
      await origin.close();
    }
  });

  it('writes one close line per tunnel with exactly the contract fields', async () => {
    const { client } = await openTunnel(proxy.port, ok);
    client.send('0123456789');
    await client.until((d) => d === '0123456789');
    client.socket.end();
    await client.untilClosed();
    const close = await proxy.waitForLine((l) => l['event'] === 'close' && l['bytes_out'] === 10);
    expect(Object.keys(close).sort()).toEqual(
      ['bytes_in', 'bytes_out', 'duration_ms', 'event', 'host', 'port', 'ts'].sort(),
    );
    expect(close['bytes_in']).toBe(13);
    expect(close['host']).toBe('ok.test');
    const decision = proxy.lines.find((l) => l['event'] === 'egress' && l['allowed'] === true);
    expect(Object.keys(decision ?? {})).toEqual([
      'ts',
      'event',
      'method',
      'host',
      'port',
      'allowed',
      'reason',
      'address',
      'status',
    ]);
    const refused = proxy.lines.find((l) => l['event'] === 'egress' && l['allowed'] === false);
    expect(Object.keys(refused ?? {})).toEqual([
      'ts',
      'event',
      'method',
      'host',
      'port',
      'allowed',
      'reason',
      'status',
    ]);
    expect(typeof refused?.['ts']).toBe('string');
    expect(Number.isNaN(Date.parse(String(refused?.['ts'])))).toBe(false);
  });

  it('refuses to tunnel to the proxy itself even inside an exempted range', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const addr = probe.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    await new Promise<void>((r) => probe.close(() => r()));
    const p = await startProxy([
      '--listen',
      `127.0.0.1:${port}`,
      '--dns-server',
      dns.server,
      '--allow-address',
      '127.0.0.0/8',
      '--allow',
      `self.test:${port}`,
      '--resolve',
      'self.test=127.0.0.1',
    ]);
    try {
      const { status, client } = await openTunnel(p.port, `self.test:${port}`);
      client.close();
      expect(status).toBe(403);
      expect((await p.waitForLine((l) => l['host'] === 'self.test'))['reason']).toBe(
        'forbidden-address:proxy-itself',
      );
    } finally {
      await p.stop();
    }
  });

  it('a refused connection to a closed port is 502 connect-failed', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const addr = probe.address();
    const port = typeof addr === 'object' && addr ? addr.port : 0;
    await new Promise<void>((r) => probe.close(() => r()));
    const p = await startProxy([
      '--dns-server',
      dns.server,
      '--allow-address',
      '127.0.0.0/8',
      '--allow',
      `closed.test:${port}`,
      '--resolve',
      'closed.test=127.0.0.1',
    ]);
    try {
      const { status, client } = await openTunnel(p.port, `closed.test:${port}`);
      client.close();
      expect(status).toBe(502);
    } finally {
      await p.stop();
    }
  });
});

describe('limits', () => {
  it('past --max-tunnels a CONNECT gets 429 and the open tunnels keep working', async () => {
    const p = await startProxy([
      '--dns-server',
      dns.server,
      '--allow-address',
      '127.0.0.0/8',
      '--allow',
      ok,
      '--resolve',
      'ok.test=127.0.0.1',
      '--max-tunnels',
      '2',
    ]);
    try {
      const a = await openTunnel(p.port, ok);
      const b = await openTunnel(p.port, ok);
      expect([a.status, b.status]).toEqual([200, 200]);
      const c = await openTunnel(p.port, ok);
      expect(c.status).toBe(429);
      c.client.close();
      a.client.send('still-a');
      b.client.send('still-b');
      await a.client.until((d) => d === 'still-a');
      await b.client.until((d) => d === 'still-b');
      a.client.close();
      await p.waitForLine((l) => l['event'] === 'close');
      const d = await openTunnel(p.port, ok);
      expect(d.status).toBe(200);
      d.client.close();
      b.client.close();
    } finally {
      await p.stop();
    }
  });

  it('--idle-timeout closes a tunnel with no traffic and logs its close', async () => {
    const p = await startProxy([
      '--dns-server',
      dns.server,
      '--allow-address',
      '127.0.0.0/8',
      '--allow',
      ok,
      '--resolve',
      'ok.test=127.0.0.1',
      '--idle-timeout',
      '1',
    ]);
    try {
      const { status, client } = await openTunnel(p.port, ok);
      expect(status).toBe(200);
      const started = Date.now();
      await client.untilClosed(15_000);
      expect(Date.now() - started).toBeGreaterThanOrEqual(900);
      const close = await p.waitForLine((l) => l['event'] === 'close');
      expect(close['duration_ms']).toBeGreaterThanOrEqual(900);
    } finally {
      await p.stop();
    }
  });

  it('a slowloris client is cut off at the header timeout with 408', async () => {
    const p = await startProxy([
      '--dns-server',
      dns.server,
      '--allow',
      'ok.test',
      '--header-timeout-ms',
      '1000',
    ]);
    try {
      const client = await RawClient.open(p.port);
      client.send('GET http://ok.test/ HTTP/1.1\r\nHost: ok.test\r\n');
      const timer = setInterval(() => client.send('X-Drip: 1\r\n'), 200);
      const started = Date.now();
      try {
        await client.untilClosed(15_000);
      } finally {
        clearInterval(timer);
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      expect(statusOf(client.data)).toBe(408);
      expect((await p.waitForLine((l) => l['reason'] === 'header-timeout'))['status']).toBe(408);
    } finally {
      await p.stop();
    }
  });

  it('oversized headers are 431', async () => {
    const res = await rawExchange(
      proxy.port,
      `GET http://${ok}/ HTTP/1.1\r\nHost: ${ok}\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`,
    );
    expect(statusOf(res)).toBe(431);
  });

  it('too many headers are 431', async () => {
    const many = Array.from({ length: 150 }, (_, i) => `X-H${i}: v\r\n`).join('');
    const res = await rawExchange(proxy.port, `GET http://${ok}/ HTTP/1.1\r\nHost: ${ok}\r\n${many}\r\n`);
    expect(statusOf(res)).toBe(431);
  });

  it('leaks no sockets after many refused attempts', async () => {
    const pid = proxy.proc.pid ?? 0;
    // Warm up once so lazily opened descriptors (c-ares, the log pipe) are counted in the baseline.
    for (const t of ['127.0.0.1:1', 'evil.test:443']) (await openTunnel(proxy.port, t)).client.close();
    await new Promise((r) => setTimeout(r, 300));
    const before = openFds(pid);
    const attempts: Promise<unknown>[] = [];
    for (let i = 0; i < 300; i++) {
      const kind = i % 3;
      if (kind === 0)
        attempts.push(openTunnel(proxy.port, `evil${i}.test:443`).then((t) => t.client.close()));
      if (kind === 1)
        attempts.push(rawExchange(proxy.port, `GET http://0x7f.${i}/ HTTP/1.1\r\nHost: 0x7f.${i}\r\n\r\n`));
      if (kind === 2) attempts.push(rawExchange(proxy.port, 'GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
      if (attempts.length >= 30) await Promise.all(attempts.splice(0));
    }
    await Promise.all(attempts);
    const after = await waitFor(
      () => {
        const n = openFds(pid);
        return n <= before + 2 ? n : undefined;
      },
      10_000,
      'descriptors to be released',
    ).catch(() => openFds(pid));
    expect(after).toBeLessThanOrEqual(before + 2);
  });
});
