import { createHash, randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import { type ProxyProcess, startEcho, startProxy, waitFor } from '../__fixtures__/harness.js';

// The upstream → client half of a tunnel reads into buffers the proxy reuses (one shared by
// every tunnel, two of a bulk tunnel's own). These tests stream distinct random bytes through
// several tunnels at once, with clients that read at different speeds, and check every tunnel got
// exactly its own bytes, in order, with the close line counting them.

const sent = new Map<number, { sha: string; size: number }>();
let dns: TestDns;
let origin: Awaited<ReturnType<typeof startEcho>>;
let proxy: ProxyProcess;
let target: string;

/** The origin: the client's first line names a size; it answers that many random bytes and ends. */
function serve(socket: Socket): void {
  let line = '';
  const onData = (d: Buffer) => {
    line += d.toString('latin1');
    const nl = line.indexOf('\n');
    if (nl < 0) return;
    socket.off('data', onData);
    const [id, size, chunk] = line.slice(0, nl).split(' ').map(Number) as [number, number, number];
    const hash = createHash('sha256');
    let left = size;
    const pump = () => {
      while (left > 0) {
        const bytes = randomBytes(Math.min(left, chunk));
        left -= bytes.length;
        hash.update(bytes);
        if (!socket.write(bytes)) return void socket.once('drain', pump);
      }
      sent.set(id, { sha: hash.digest('hex'), size });
      socket.end();
    };
    pump();
  };
  socket.on('data', onData);
}

interface Received {
  sha: string;
  size: number;
  ended: boolean;
}

/**
 * Opens a tunnel, asks for `size` bytes, reads them: `slow` pauses now and then; `stall` stops
 * reading once for long enough that the kernel's buffers fill and the proxy's writes to it stay
 * pending while other tunnels keep reading.
 */
function download(id: number, size: number, chunk: number, slow: boolean, stall = false): Promise<Received> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port: proxy.port, allowHalfOpen: true });
    const hash = createHash('sha256');
    let head = '';
    let inBody = false;
    let got = 0;
    let reads = 0;
    let stalled = false;
    socket.on('error', reject);
    socket.once('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    const body = (d: Buffer) => {
      got += d.length;
      hash.update(d);
      // A slow reader: the proxy's writes to it stay pending and its upstream must wait.
      if (stall && got >= 512 * 1024 && !stalled) {
        stalled = true;
        socket.pause();
        setTimeout(() => socket.resume(), 400);
      }
      if (slow && ++reads % 8 === 0) {
        socket.pause();
        setTimeout(() => socket.resume(), 15);
      }
    };
    socket.on('data', (d: Buffer) => {
      if (inBody) return body(d);
      head += d.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!head.startsWith('HTTP/1.1 200')) return reject(new Error(head));
      const rest = Buffer.from(head.slice(end + 4), 'latin1');
      inBody = true;
      if (rest.length > 0) body(rest);
      socket.write(`${id} ${size} ${chunk}\n`);
    });
    socket.on('end', () => {
      socket.end();
      resolve({ sha: hash.digest('hex'), size: got, ended: true });
    });
  });
}

beforeAll(async () => {
  dns = await new TestDns().start();
  origin = await startEcho(serve);
  target = `bulk.test:${origin.port}`;
  proxy = await startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    target,
    '--resolve',
    'bulk.test=127.0.0.1',
  ]);
});

afterAll(async () => {
  await proxy?.stop();
  await origin?.close();
  dns?.stop();
});

describe('the downstream relay', () => {
  it('gives each of several concurrent tunnels exactly its own bytes, fast and slow readers alike', async () => {
    const MiB = 1024 * 1024;
    // Big origin writes make full reads (the tunnel's own buffers); small ones the shared buffer.
    const plan = [
      { size: 6 * MiB, chunk: 256 * 1024, slow: false },
      { size: 6 * MiB, chunk: 256 * 1024, slow: true },
      { size: 3 * MiB, chunk: 1000, slow: false },
      { size: 3 * MiB, chunk: 7000, slow: true },
      { size: 4 * MiB, chunk: 64 * 1024, slow: true },
      { size: 123_457, chunk: 300, slow: false },
      { size: 10 * MiB, chunk: 4000, slow: false, stall: true },
      { size: 12 * MiB, chunk: 2000, slow: false },
    ];
    const got = await Promise.all(
      plan.map((p, id) => download(id, p.size, p.chunk, p.slow, 'stall' in p && p.stall)),
    );
    for (const [id, p] of plan.entries()) {
      expect(got[id]?.size, `tunnel ${id}`).toBe(p.size);
      expect(got[id]?.sha, `tunnel ${id}`).toBe(sent.get(id)?.sha);
    }
    // Every close line counts exactly the bytes the origin sent.
    const closes = () => proxy.lines.filter((l) => l['event'] === 'close');
    await waitFor(() => (closes().length >= plan.length ? true : undefined), 10_000, 'close lines');
    const counted = closes().map((l) => l['bytes_in']);
    for (const p of plan) expect(counted).toContain(p.size);
  }, 60_000);

  it('a bulk tunnel after a burst of small ones still gets exactly its bytes (buffers switch back and forth)', async () => {
    for (let round = 0; round < 3; round++) {
      const id = 100 + round;
      const [big, small] = await Promise.all([
        download(id, 2 * 1024 * 1024 + round, 128 * 1024, round === 1),
        download(id + 10, 50_000, 500, false),
      ]);
      expect(big.sha).toBe(sent.get(id)?.sha);
      expect(small.sha).toBe(sent.get(id + 10)?.sha);
    }
  }, 60_000);
});
