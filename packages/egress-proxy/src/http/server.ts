import { Agent, createServer, type Server } from 'node:http';
import { connect, type NetConnectOpts, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { handleConnect } from '../tunnel/connect.js';
import type { ProxyContext } from './context.js';
import { handleForward } from './forward.js';
import { firstHeadRead } from './front.js';
import { refuseRaw, refuseResponse } from './respond.js';

/** Upstream pool for plain-HTTP forwards; keyed by the vetted IP, so reuse never skips a check. */
export function createUpstreamAgent(timeoutMs: number, maxSockets = 1024): Agent {
  // maxSockets bounds concurrent forwards as --max-tunnels bounds tunnels; more requests queue.
  const agent = new Agent({
    keepAlive: true,
    maxFreeSockets: 256,
    maxSockets,
    timeout: timeoutMs,
    scheduling: 'lifo',
  });
  // The default createConnection would accept a host name and run dns.lookup; ours only ever
  // receives the vetted IP, and never resolves.
  (agent as unknown as { createConnection: (o: NetConnectOpts) => Socket }).createConnection = (o) =>
    connect({ ...o, noDelay: true } as NetConnectOpts);
  return agent;
}

function clientErrorStatus(code: string | undefined): [number, string] {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return [431, 'headers-too-large'];
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return [408, 'header-timeout'];
    case 'HPE_UNEXPECTED_CONTENT_LENGTH':
    case 'HPE_INVALID_CONTENT_LENGTH':
    case 'HPE_INVALID_TRANSFER_ENCODING':
    case 'HPE_INVALID_CHUNK_SIZE':
      return [400, 'bad-framing'];
    default:
      return [400, 'malformed-request'];
  }
}

export function createProxyServer(ctx: ProxyContext): Server {
  const server = createServer({
    maxHeaderSize: ctx.options.maxHeaderBytes,
    headersTimeout: ctx.options.headerTimeoutMs,
    // Bodies may legitimately be slow; the idle timeout bounds them instead.
    requestTimeout: 0,
    // Node checks header deadlines on this interval; the default (30 s) would let a slowloris
    // client hold a socket far past the header timeout.
    connectionsCheckingInterval: Math.max(250, Math.min(1000, ctx.options.headerTimeoutMs / 4)),
    keepAliveTimeout: 5000,
    // Host is checked by the proxy itself so the refusal is logged with a reason.
    requireHostHeader: false,
    joinDuplicateHeaders: false,
    insecureHTTPParser: false,
  });
  server.maxHeadersCount = 0;
  // Node answers a non-100-continue Expect itself, unlogged: log and refuse it like any request.
  server.on('checkExpectation', (req, res) => {
    firstHeadRead(req.socket);
    ctx.log.decision({
      method: req.method ?? '',
      host: '',
      port: 0,
      allowed: false,
      reason: 'expectation-refused',
      status: 417,
    });
    res.shouldKeepAlive = false;
    refuseResponse(res, 417, 'expectation-refused');
  });
  server.timeout = ctx.options.idleTimeoutMs;
  // A bug in a handler must cost one request, not the process and every open tunnel with it.
  server.on('request', (req, res) => {
    firstHeadRead(req.socket);
    handleForward(ctx, req, res).catch(() => {
      if (!res.headersSent) refuseResponse(res, 502, 'internal-error');
      else res.destroy();
    });
  });
  server.on('connect', (req, socket: Duplex, head: Buffer) => {
    firstHeadRead(req.socket);
    handleConnect(ctx, req.url ?? '', req.rawHeaders, socket, head).catch(() => socket.destroy());
  });
  server.on('upgrade', (req, socket: Duplex) => {
    firstHeadRead(req.socket);
    socket.on('error', () => socket.destroy());
    ctx.log.decision({
      method: req.method ?? '',
      host: '',
      port: 0,
      allowed: false,
      reason: 'upgrade-refused',
      status: 400,
    });
    refuseRaw(socket, 400, 'upgrade-refused');
  });
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Duplex) => {
    firstHeadRead(socket as Socket);
    socket.on('error', () => socket.destroy());
    if (err.code === 'ECONNRESET' || err.code === 'EPIPE' || !socket.writable) {
      socket.destroy();
      return;
    }
    const [status, reason] = clientErrorStatus(err.code);
    ctx.log.decision({ method: '', host: '', port: 0, allowed: false, reason, status });
    refuseRaw(socket, status, reason);
  });
  return server;
}
