import { type ChildProcess, type IOType, spawn } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { connect, createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseListeningLine } from '../contract/index.js';

export const BUNDLE = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  '..',
  'dist',
  'bundle',
  'ringfence-egress-proxy.mjs',
);

export interface ProxyProcess {
  readonly port: number;
  readonly proc: ChildProcess;
  readonly lines: Record<string, unknown>[];
  stderr(): string;
  waitForLine(pred: (l: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
}

export function waitFor<T>(check: () => T | undefined, timeoutMs: number, what: string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const tick = () => {
      const value = check();
      if (value !== undefined) return resolve(value);
      if (Date.now() > deadline) return reject(new Error(`timed out waiting for ${what}`));
      setTimeout(tick, 20);
    };
    tick();
  });
}

/** Spawns the bundled proxy on 127.0.0.1 with an OS-chosen port and waits for its startup line. */
export async function startProxy(args: string[], stdin: IOType = 'pipe'): Promise<ProxyProcess> {
  const hasListen = args.includes('--listen');
  const proc: ChildProcess = spawn(process.execPath, [BUNDLE, ...(hasListen ? [] : ['--listen', '127.0.0.1:0']), ...args], {
    stdio: [stdin, 'pipe', 'pipe'],
  });
  const lines: Record<string, unknown>[] = [];
  let out = '';
  let err = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    out += chunk.toString();
    let nl = out.indexOf('\n');
    while (nl >= 0) {
      lines.push(JSON.parse(out.slice(0, nl)) as Record<string, unknown>);
      out = out.slice(nl + 1);
      nl = out.indexOf('\n');
    }
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const port = await waitFor(
    () => {
      const listening = err.split('\n').map(parseListeningLine).find((l) => l !== undefined);
      if (listening) return listening.port;
      if (proc.exitCode !== null) throw new Error(`proxy exited ${proc.exitCode}: ${err}`);
      return undefined;
    },
    15_000,
    'the proxy to listen',
  );
  return {
    port,
    proc,
    lines,
    stderr: () => err,
    waitForLine: (pred, timeoutMs = 10_000) => waitFor(() => lines.find(pred), timeoutMs, 'a log line'),
    stop: async () => {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const exited = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGTERM');
      await exited;
    },
  };
}

export interface SeenRequest {
  method: string;
  url: string;
  rawHeaders: string[];
  body: string;
}

/** A plain HTTP origin on 127.0.0.1 that records what it was sent. */
export async function startOrigin(
  handler?: (req: IncomingMessage, res: import('node:http').ServerResponse, body: string) => void,
): Promise<{ port: number; seen: SeenRequest[]; server: Server; close(): Promise<void> }> {
  const seen: SeenRequest[] = [];
  const server = createHttpServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => {
      body += c.toString();
    });
    req.on('end', () => {
      seen.push({ method: req.method ?? '', url: req.url ?? '', rawHeaders: req.rawHeaders, body });
      if (handler) return handler(req, res, body);
      res.setHeader('Content-Type', 'text/plain');
      res.end(`origin saw ${req.method} ${req.url}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    seen,
    server,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A TCP origin for tunnels: echoes bytes and, when the client half-closes, writes "BYE" and ends. */
export async function startEcho(
  onConnection?: (s: Socket) => void,
): Promise<{ port: number; server: NetServer; connections: number; close(): Promise<void> }> {
  const state = { connections: 0 };
  const sockets = new Set<Socket>();
  const server = createNetServer({ allowHalfOpen: true }, (socket) => {
    state.connections++;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    if (onConnection) return onConnection(socket);
    socket.on('data', (d) => socket.write(d));
    socket.on('end', () => socket.end('BYE'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    port,
    server,
    get connections() {
      return state.connections;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}

/** A raw client socket with a byte buffer, for requests Node's own client would never send. */
export class RawClient {
  readonly socket: Socket;
  data = '';
  ended = false;
  closed = false;

  private constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', (d: Buffer) => {
      this.data += d.toString('latin1');
    });
    socket.on('end', () => {
      this.ended = true;
    });
    socket.on('close', () => {
      this.closed = true;
    });
    socket.on('error', () => {});
  }

  static open(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const socket = connect({ host: '127.0.0.1', port, allowHalfOpen: true });
      socket.once('connect', () => resolve(new RawClient(socket)));
      socket.once('error', reject);
    });
  }

  send(text: string): this {
    this.socket.write(text);
    return this;
  }

  until(pred: (data: string) => boolean, timeoutMs = 10_000): Promise<string> {
    return waitFor(() => (pred(this.data) ? this.data : undefined), timeoutMs, `data (have ${JSON.stringify(this.data)})`);
  }

  untilClosed(timeoutMs = 10_000): Promise<string> {
    return waitFor(() => (this.closed || this.ended ? this.data : undefined), timeoutMs, 'the socket to close');
  }

  close(): void {
    this.socket.destroy();
  }
}

/** Sends one request and returns everything the proxy answered before closing. */
export async function rawExchange(port: number, text: string): Promise<string> {
  const client = await RawClient.open(port);
  client.send(text);
  // Refusals always close; a successful exchange is read up to its status line and body start.
  await client.until((d) => d.includes('\r\n\r\n'), 10_000);
  await new Promise((r) => setTimeout(r, 50));
  client.close();
  return client.data;
}

export function statusOf(response: string): number {
  const m = /^HTTP\/1\.[01] (\d{3})/.exec(response);
  return m ? Number(m[1]) : 0;
}

/** Opens a CONNECT tunnel; resolves with the status and, on 200, the live socket. */
export async function openTunnel(
  proxyPort: number,
  authority: string,
  head = '',
): Promise<{ status: number; client: RawClient; response: string }> {
  const client = await RawClient.open(proxyPort);
  client.send(`CONNECT ${authority} HTTP/1.1\r\nHost: ${authority}\r\n\r\n${head}`);
  const response = await client.until((d) => d.includes('\r\n\r\n'));
  const status = statusOf(response);
  client.data = client.data.slice(client.data.indexOf('\r\n\r\n') + 4);
  return { status, client, response };
}

export function openFds(pid: number): number {
  return readdirSync(`/proc/${pid}/fd`).length;
}
