import { once } from 'node:events';
import { createServer, type IncomingMessage, request, type Server } from 'node:http';
import { type AddressInfo, connect } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { type BoundedBody, readBoundedBody } from './bounded-body.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
});

/** A loopback server that reads each request body with the helper and reports what it gave. */
async function reading(max: number) {
  const seen: (BoundedBody | { rejected: string })[] = [];
  const settled: (() => void)[] = [];
  let arrived = 0;
  server = createServer((req: IncomingMessage, res) => {
    req.once('data', () => arrived++);
    readBoundedBody(req, max).then(
      (read) => {
        seen.push(read);
        settled.shift()?.();
        if (read.tooLarge) req.resume();
        res.end('ok');
      },
      (error: Error) => {
        seen.push({ rejected: error.message });
        settled.shift()?.();
      },
    );
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const port = (server.address() as AddressInfo).port;
  const send = (chunks: string[], headers: Record<string, string> = {}) =>
    new Promise<void>((resolve) => {
      settled.push(resolve);
      const req = request({ host: '127.0.0.1', port, method: 'POST', headers });
      req.on('response', (res) => res.resume());
      for (const chunk of chunks) req.write(chunk);
      req.end();
    });
  /** Headers and part of the body the client promised, then the connection is cut. */
  const cut = async () => {
    const done = new Promise<void>((resolve) => settled.push(resolve));
    const socket = connect(port, '127.0.0.1');
    socket.write('POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\npart of a body');
    await vi.waitFor(() => expect(arrived).toBe(1));
    socket.destroy();
    await done;
  };
  return { seen, send, cut };
}

describe('readBoundedBody', () => {
  it('gives the whole body up to the cap, the cap itself included', async () => {
    const t = await reading(10);
    await t.send(['hello', 'world']);
    expect(t.seen).toEqual([{ tooLarge: false, body: Buffer.from('helloworld') }]);
  });

  it('refuses a declared length over the cap unread, naming it', async () => {
    const t = await reading(10);
    await t.send(['x'.repeat(11)], { 'Content-Length': '11' });
    expect(t.seen).toEqual([{ tooLarge: true, declared: 11 }]);
  });

  it('stops at the cap when the body goes over it without declaring its length', async () => {
    const t = await reading(10);
    await t.send(['x'.repeat(8), 'y'.repeat(8)]);
    expect(t.seen).toEqual([{ tooLarge: true }]);
  });

  it('rejects when the connection closes before the body ended', async () => {
    const t = await reading(1000);
    await t.cut();
    expect(t.seen).toHaveLength(1);
    expect(t.seen[0]).toMatchObject({ rejected: expect.any(String) });
  });
});
