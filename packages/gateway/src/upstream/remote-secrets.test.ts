// Issue 21.6: a remote server's URL may carry a token (`?api_key=`), and so may a redirect it
// answers with. Neither reaches an error message: they are what `mcp serve` prints and records.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { RemoteUpstream } from './remote.js';

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

/** A loopback server that answers every request with `status` and `headers`. */
async function answering(status: number, headers: Record<string, string> = {}): Promise<number> {
  const server = createServer((_req, res) => {
    res.writeHead(status, headers);
    res.end();
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function failureOf(url: string): Promise<string> {
  const upstream = new RemoteUpstream({ name: 'keyed', transport: 'http', url });
  try {
    await upstream.start();
  } catch (error) {
    return (error as Error).message;
  } finally {
    await upstream.close().catch(() => {});
  }
  throw new Error('expected the connection to fail');
}

describe('a remote server that cannot be reached shows no token of its URL', () => {
  it('a refused connection', async () => {
    const port = await answering(500);
    servers[0]!.close();
    const message = await failureOf(
      `http://127.0.0.1:${port}/mcp?api_key=remoteKey0001#token=remoteFrag0002`,
    );
    expect(message).toMatch(
      /^cannot connect to http:\/\/127\.0\.0\.1:\d+\/mcp\?api_key=\*\*\*#token=\*\*\*: /,
    );
    expect(message).not.toMatch(/remoteKey0001|remoteFrag0002/);
  });

  it('a redirect whose target carries a token', async () => {
    const port = await answering(302, {
      location: 'https://login.example/authorize?code=redirectCode0003&client_secret=redirectSecret0004',
    });
    const message = await failureOf(`http://127.0.0.1:${port}/mcp?token=remoteToken0005`);
    expect(message).toContain('redirect to https://login.example/authorize?code=***&client_secret=***');
    expect(message).not.toMatch(/redirectCode0003|redirectSecret0004|remoteToken0005/);
  });
});
