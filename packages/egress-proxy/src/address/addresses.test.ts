import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import {
  openTunnel,
  type ProxyProcess,
  RawClient,
  rawExchange,
  startEcho,
  startOrigin,
  startProxy,
  statusOf,
} from '../__fixtures__/harness.js';

/**
 * Every case here runs with 127.0.0.0/8 exempted and the origin's port allowed, so a literal
 * that slipped through detection would actually reach the local echo server and the case
 * would fail on the 200.
 */
let dns: TestDns;
let echo: Awaited<ReturnType<typeof startEcho>>;
let origin: Awaited<ReturnType<typeof startOrigin>>;
let proxy: ProxyProcess;

beforeAll(async () => {
  dns = await new TestDns().start();
  dns.records.set('mixed.test', { a: ['127.0.0.1', '10.9.9.9'] });
  dns.records.set('mixed6.test', { a: ['127.0.0.1'], aaaa: ['fd00::1'] });
  dns.records.set('good.test', { a: ['127.0.0.1'] });
  dns.records.set('slow.test', { silent: true });
  dns.records.set('late.test', { a: ['127.0.0.1'], delayMs: 150 });
  echo = await startEcho();
  origin = await startOrigin();
  proxy = await startProxy([
    '--allow-address',
    '127.0.0.0/8',
    '--dns-server',
    dns.server,
    '--dns-timeout-ms',
    '1000',
    ...[
      'ok.test',
      'meta.test',
      'pasta.test',
      'mapped.test',
      'nat64.test',
      'ten.test',
      'cgnat.test',
      'six.test',
    ].flatMap((h) => ['--allow', `${h}:${echo.port}`]),
    ...['mixed.test', 'mixed6.test', 'good.test', 'slow.test', 'missing.test', 'late.test'].flatMap((h) => [
      '--allow',
      `${h}:${echo.port}`,
    ]),
    '--resolve',
    'ok.test=127.0.0.1',
    '--resolve',
    'meta.test=169.254.169.254',
    '--resolve',
    'pasta.test=169.254.1.2',
    '--resolve',
    'mapped.test=::ffff:127.0.0.1',
    '--resolve',
    'nat64.test=64:ff9b::7f00:1',
    '--resolve',
    'ten.test=10.0.0.1',
    '--resolve',
    'cgnat.test=100.64.0.1',
    '--resolve',
    'six.test=127.0.0.1',
    '--resolve',
    'six.test=::1',
  ]);
});

afterAll(async () => {
  await proxy?.stop();
  await echo?.close();
  await origin?.close();
  dns?.stop();
});

const LOOPBACK_SPELLINGS = [
  '127.0.0.1',
  '127.0.0.1.',
  '2130706433',
  '0177.0.0.1',
  '0x7f.1',
  '0x7F000001',
  '127.1',
  '127.0.1',
  '0x7f.0x0.0x0.0x1',
  '017700000001',
  '[::1]',
  '[::ffff:127.0.0.1]',
  '[::ffff:7f00:1]',
  '[0:0:0:0:0:0:0:1]',
  '[fe80::1%25eth0]',
  '[::127.0.0.1]',
  '0.0.0.0',
  '0',
];
const METADATA_SPELLINGS = [
  '169.254.169.254',
  '2852039166',
  '0251.0376.0251.0376',
  '0xa9fea9fe',
  '[::ffff:a9fe:a9fe]',
];

describe('IP literals are refused in every spelling, with no DNS query', () => {
  it.each([...LOOPBACK_SPELLINGS, ...METADATA_SPELLINGS])('CONNECT %s', async (host) => {
    const before = dns.queries.length;
    const { status, client } = await openTunnel(proxy.port, `${host}:${echo.port}`);
    client.close();
    expect(status).toBe(403);
    expect(dns.queries.length).toBe(before);
    const line = await proxy.waitForLine(
      (l) => l['method'] === 'CONNECT' && l['host'] === host.toLowerCase(),
    );
    expect(line['reason']).toBe('ip-literal');
  });

  it.each(['0x7f.1', '2130706433', '[::1]', '127.1'])('plain GET http://%s/', async (host) => {
    const authority = `${host}:${origin.port}`;
    const res = await rawExchange(
      proxy.port,
      `GET http://${authority}/ HTTP/1.1\r\nHost: ${authority}\r\n\r\n`,
    );
    expect(statusOf(res)).toBe(403);
    expect(origin.seen).toHaveLength(0);
  });

  it('percent-encoding in the authority is refused as malformed', async () => {
    const { status, client } = await openTunnel(proxy.port, `%31%32%37.0.0.1:${echo.port}`);
    client.close();
    expect(status).toBe(400);
  });

  it('an unbracketed IPv6 authority is refused', async () => {
    const { status, client } = await openTunnel(proxy.port, `::1:${echo.port}`);
    client.close();
    expect(status).toBe(403);
  });
});

describe('allowed names that resolve to forbidden addresses', () => {
  it.each([
    ['meta.test', 'forbidden-address:link-local'],
    ['pasta.test', 'forbidden-address:host-loopback'],
    ['mapped.test', 'forbidden-address:ipv4-mapped'],
    ['nat64.test', 'forbidden-address:nat64'],
    ['ten.test', 'forbidden-address:private'],
    ['cgnat.test', 'forbidden-address:cgnat'],
    ['six.test', 'forbidden-address:loopback'],
    ['mixed.test', 'forbidden-address:private'],
    ['mixed6.test', 'forbidden-address:unique-local'],
  ])('%s is refused (%s)', async (host, reason) => {
    const { status, client } = await openTunnel(proxy.port, `${host}:${echo.port}`);
    client.close();
    expect(status).toBe(403);
    const line = await proxy.waitForLine((l) => l['host'] === host);
    expect(line['reason']).toBe(reason);
    expect(line['allowed']).toBe(false);
  });

  it('a name answered by the DNS client with an exempted address is reached', async () => {
    const { status, client } = await openTunnel(proxy.port, `good.test:${echo.port}`);
    expect(status).toBe(200);
    client.send('ping');
    await client.until((d) => d.includes('ping'));
    client.close();
    expect(dns.queries).toContain('good.test/A');
    expect(dns.queries).toContain('good.test/AAAA');
  });

  it('bytes a client sends while the name is still being resolved are relayed, not lost', async () => {
    const client = await RawClient.open(proxy.port);
    client.send(`CONNECT late.test:${echo.port} HTTP/1.1\r\nHost: late.test:${echo.port}\r\n\r\n`);
    // The DNS answer takes 150 ms (well under the proxy's 1 s DNS timeout); send before it lands.
    await new Promise((r) => setTimeout(r, 30));
    client.send('sent-early');
    await client.until((d) => d.endsWith('\r\n\r\nsent-early'));
    client.close();
  });

  it('a DNS server that never answers gives 504 dns-timeout', async () => {
    const { status, client } = await openTunnel(proxy.port, `slow.test:${echo.port}`);
    client.close();
    expect(status).toBe(504);
  });

  it('a name with no records gives 502', async () => {
    const { status, client } = await openTunnel(proxy.port, `missing.test:${echo.port}`);
    client.close();
    expect(status).toBe(502);
  });

  it('names that are not allowlisted are never looked up', async () => {
    const before = dns.queries.length;
    const { status, client } = await openTunnel(proxy.port, `unlisted.test:${echo.port}`);
    client.close();
    expect(status).toBe(403);
    expect(dns.queries.length).toBe(before);
  });
});
