import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TestDns } from '../__fixtures__/dns.js';
import { type ProxyProcess, startEcho, startProxy, waitFor } from '../__fixtures__/harness.js';

// Tunnels come and go around the reused read buffers (the shared one, the own pairs, the spare
// list): clients that reset mid-download, origins that reset mid-stream, slow readers, bulk and
// trickling origins, several rounds so that spare pairs pass from tunnel to tunnel. Each tunnel's
// bytes are a stream only its id yields, checked byte by byte as they arrive: one byte of another
// tunnel, a stale byte of a reused buffer, or a gap, fails at its offset, cut-off tunnels included.

/** A deterministic byte stream per id (xorshift32), produced in order. */
class Stream {
  private state: number;
  private left = Buffer.alloc(0);
  constructor(id: number) {
    this.state = (id * 2654435761) >>> 0 || 1;
  }
  next(n: number): Buffer {
    const out = Buffer.allocUnsafe(n);
    let at = this.left.copy(out, 0, 0, Math.min(n, this.left.length));
    this.left = this.left.subarray(at);
    while (at < n) {
      let x = this.state;
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      this.state = x >>> 0;
      const word = Buffer.allocUnsafe(4);
      word.writeUInt32LE(this.state);
      const take = Math.min(4, n - at);
      word.copy(out, at, 0, take);
      at += take;
      if (take < 4) this.left = word.subarray(take);
    }
    return out;
  }
}

let dns: TestDns;
let origin: Awaited<ReturnType<typeof startEcho>>;
let proxy: ProxyProcess;
let target: string;

/** The origin: the first line names id, size, chunk and whether to reset half way. */
function serve(socket: Socket): void {
  let line = '';
  const onData = (d: Buffer) => {
    line += d.toString('latin1');
    const nl = line.indexOf('\n');
    if (nl < 0) return;
    socket.off('data', onData);
    const [id, size, chunk, reset] = line.slice(0, nl).split(' ').map(Number) as number[];
    const stream = new Stream(id as number);
    let left = size as number;
    const pump = () => {
      while (left > 0) {
        if (reset && left <= (size as number) / 2) return void socket.resetAndDestroy();
        const n = Math.min(left, chunk as number);
        left -= n;
        if (!socket.write(stream.next(n))) return void socket.once('drain', pump);
      }
      socket.end();
    };
    pump();
  };
  socket.on('data', onData);
}

interface Plan {
  size: number;
  chunk: number;
  /** Pause after every read this long (ms): a client whose socket stays full. */
  slowMs?: number;
  /** The client resets the tunnel after this many bytes. */
  clientResetAt?: number;
  originReset?: boolean;
}

/** Opens a tunnel and checks every byte against the id's stream; resolves with the count. */
function download(id: number, plan: Plan): Promise<{ got: number; ended: boolean; mismatch?: number }> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port: proxy.port, allowHalfOpen: true });
    const expected = new Stream(id);
    let head = '';
    let inBody = false;
    let got = 0;
    let done = false;
    const finish = (result: { got: number; ended: boolean; mismatch?: number }) => {
      if (done) return;
      done = true;
      resolve(result);
    };
    socket.on('error', () => finish({ got, ended: false }));
    socket.on('close', () => finish({ got, ended: false }));
    socket.once('connect', () => socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`));
    const body = (d: Buffer) => {
      const want = expected.next(d.length);
      if (!want.equals(d)) {
        let at = 0;
        while (want[at] === d[at]) at++;
        finish({ got, ended: false, mismatch: got + at });
        socket.destroy();
        return;
      }
      got += d.length;
      if (plan.clientResetAt !== undefined && got >= plan.clientResetAt) {
        finish({ got, ended: false });
        socket.resetAndDestroy();
        return;
      }
      if (plan.slowMs) {
        socket.pause();
        setTimeout(() => socket.resume(), plan.slowMs);
      }
    };
    socket.on('data', (d: Buffer) => {
      if (done) return;
      if (inBody) return body(d);
      head += d.toString('latin1');
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      if (!head.startsWith('HTTP/1.1 200')) return finish({ got: -1, ended: false });
      inBody = true;
      socket.write(`${id} ${plan.size} ${plan.chunk} ${plan.originReset ? 1 : 0}\n`);
      const rest = Buffer.from(head.slice(end + 4), 'latin1');
      if (rest.length > 0) body(rest);
    });
    socket.on('end', () => {
      socket.end();
      finish({ got, ended: true });
    });
  });
}

beforeAll(async () => {
  dns = await new TestDns().start();
  origin = await startEcho(serve);
  target = `churn.test:${origin.port}`;
  proxy = await startProxy([
    '--dns-server',
    dns.server,
    '--allow-address',
    '127.0.0.0/8',
    '--allow',
    target,
    '--resolve',
    'churn.test=127.0.0.1',
  ]);
});

afterAll(async () => {
  await proxy?.stop();
  await origin?.close();
  dns?.stop();
});

describe('the downstream relay under churn', () => {
  it('never hands one tunnel a byte that is not its own, as tunnels reset, stall and end around it', async () => {
    const KiB = 1024;
    const MiB = 1024 * KiB;
    const plans: Plan[] = [
      { size: 4 * MiB, chunk: 64 * KiB },
      { size: 3 * MiB, chunk: 256 * KiB, slowMs: 2 },
      { size: 2 * MiB, chunk: 1500, slowMs: 1 },
      { size: 3 * MiB, chunk: 64 * KiB, clientResetAt: 700 * KiB },
      { size: 3 * MiB, chunk: 128 * KiB, originReset: true },
      { size: 200 * KiB, chunk: 100 },
      { size: 2 * MiB, chunk: 64 * KiB + 7, slowMs: 3, clientResetAt: 1 * MiB },
      { size: 5 * MiB, chunk: 9000 },
      { size: 64 * KiB, chunk: 64 * KiB },
      { size: 1 * MiB, chunk: 32 * KiB, originReset: true, slowMs: 1 },
    ];
    for (let round = 0; round < 3; round++) {
      const results = await Promise.all(plans.map((plan, i) => download(round * 100 + i, plan)));
      for (const [i, plan] of plans.entries()) {
        const result = results[i]!;
        const what = `round ${round} tunnel ${i}`;
        expect(result.mismatch, what).toBeUndefined();
        if (plan.clientResetAt !== undefined)
          expect(result.got, what).toBeGreaterThanOrEqual(plan.clientResetAt);
        else if (plan.originReset) expect(result.got, what).toBeLessThanOrEqual(plan.size / 2);
        else {
          expect(result.got, what).toBe(plan.size);
          expect(result.ended, what).toBe(true);
        }
      }
    }
    // Every tunnel closed, with its log line.
    await waitFor(
      () => (proxy.lines.filter((l) => l['event'] === 'close').length >= 3 * plans.length ? true : undefined),
      15_000,
      'close lines',
    );
  }, 120_000);
});
