import { connect } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startEcho, waitFor } from './__fixtures__/harness.js';
import { startEgressProxy } from './index.js';

describe('startEgressProxy (programmatic API)', () => {
  it('serves, logs through the given sink, and close() ends open tunnels', async () => {
    const echo = await startEcho();
    const lines: string[] = [];
    const proxy = await startEgressProxy({
      host: '127.0.0.1',
      port: 0,
      allow: [`api.test:${echo.port}`],
      allowAddresses: ['127.0.0.0/8'],
      resolve: ['api.test=127.0.0.1'],
      dnsServers: ['127.0.0.1:9'],
      log: (l) => lines.push(l),
    });
    try {
      const socket = connect({ host: '127.0.0.1', port: proxy.port });
      let data = '';
      let closed = false;
      socket.on('data', (d) => {
        data += d.toString();
      });
      socket.on('close', () => {
        closed = true;
      });
      socket.on('error', () => {});
      socket.write(`CONNECT api.test:${echo.port} HTTP/1.1\r\nHost: api.test:${echo.port}\r\n\r\nhi`);
      await waitFor(() => (data.endsWith('hi') ? true : undefined), 10_000, 'the echo');
      expect(data.startsWith('HTTP/1.1 200')).toBe(true);
      await proxy.close();
      await waitFor(() => (closed ? true : undefined), 10_000, 'the tunnel to close');
      const parsed = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(parsed[0]).toMatchObject({ event: 'egress', allowed: true, host: 'api.test', status: 200 });
      await waitFor(() => (lines.length >= 2 ? true : undefined), 10_000, 'the close line');
      expect(JSON.parse(lines[1] ?? '{}')).toMatchObject({ event: 'close', bytes_out: 2, bytes_in: 2 });
    } finally {
      await echo.close();
    }
  });

  it('rejects bad options with coded errors', async () => {
    await expect(startEgressProxy({ host: '127.0.0.1', port: 0, allow: ['10.0.0.1'] })).rejects.toMatchObject(
      {
        code: 'EGRESS_BAD_ALLOW_ENTRY',
      },
    );
    await expect(
      startEgressProxy({ host: '127.0.0.1', port: 0, allow: ['a.test'], allowAddresses: ['nope'] }),
    ).rejects.toMatchObject({ code: 'EGRESS_BAD_CIDR' });
  });
});
