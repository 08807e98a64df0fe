import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { type AddressInfo, connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { DownstreamReader } from './downstream.js';

// In process, so the test sees the relay's client socket: a bulk tunnel (own buffers) whose
// client still has earlier bytes pending when a short read arrives must pause, and must start
// again once the client has taken them. The pending earlier bytes are fewer than the socket's
// high-water mark, so the client never emits 'drain' for them: resuming must not wait for it.

const servers: Server[] = [];
const sockets: Socket[] = [];

afterEach(() => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const s of servers.splice(0)) s.close();
});

async function listen(onSocket: (s: Socket) => void): Promise<number> {
  const server = createServer({ allowHalfOpen: true }, (s) => {
    sockets.push(s);
    onSocket(s);
  });
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

async function until(check: () => boolean, ms: number, what: string): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** origin ⇄ upstream (read by the reader) and relay client ⇄ peer (the tunnel's client). */
async function tunnel() {
  let origin: Socket | undefined;
  const originPort = await listen((s) => {
    origin = s;
  });
  let client: Socket | undefined;
  const clientPort = await listen((s) => {
    client = s;
  });
  const reader = new DownstreamReader();
  const upstream = connect({
    host: '127.0.0.1',
    port: originPort,
    allowHalfOpen: true,
    onread: reader.onread,
  });
  const peer = connect({ host: '127.0.0.1', port: clientPort, allowHalfOpen: true });
  sockets.push(upstream, peer);
  await Promise.all([once(upstream, 'connect'), once(peer, 'connect')]);
  await until(() => origin !== undefined && client !== undefined, 2000, 'accept');
  const c = client as Socket;
  reader.attach(upstream, c);
  upstream.once('end', () => c.end());
  const received: Buffer[] = [];
  let ended = false;
  peer.on('data', (d: Buffer) => received.push(d));
  peer.once('end', () => {
    ended = true;
  });
  return {
    origin: origin as Socket,
    client: c,
    peer,
    received: () => Buffer.concat(received),
    ended: () => ended,
  };
}

describe('the downstream reader resumes', () => {
  it('once a slow client took the pending bytes of a bulk tunnel, even with no drain event', async () => {
    const t = await tunnel();
    t.peer.pause();
    // One full read: the tunnel switches to its own buffers (the kernel takes it at once).
    const bulk = randomBytes(64 * 1024);
    t.origin.write(bulk);
    await until(() => t.client.bytesWritten >= bulk.length, 5000, 'the bulk read relayed');
    // The client stops taking bytes: fill the kernel until a small write stays pending.
    const filler: Buffer[] = [];
    while (t.client.writableLength === 0) {
      const piece = randomBytes(4096);
      filler.push(piece);
      t.client.write(piece);
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(t.client.writableLength).toBeLessThan(t.client.writableHighWaterMark);
    // A short read lands behind the pending bytes: the upstream pauses.
    const short = randomBytes(1000);
    const last = randomBytes(3000);
    t.origin.write(short);
    await until(() => t.client.writableLength > 4096, 5000, 'the short read relayed');
    // The client reads again; the rest must follow, then the end.
    t.peer.resume();
    await until(() => t.client.writableLength === 0, 5000, 'the pending bytes taken');
    t.origin.end(last);
    await until(t.ended, 5000, 'the tunnel to deliver everything and end');
    expect(t.received().equals(Buffer.concat([bulk, ...filler, short, last]))).toBe(true);
  });
});
