import type { Server as HttpServer } from 'node:http';
import { createServer, type Server, type Socket } from 'node:net';
import { handleConnect } from '../tunnel/connect.js';
import { ConnectHeadReader, startsConnect } from './connect-head.js';
import type { ProxyContext } from './context.js';
import { refuseRaw } from './respond.js';

/**
 * The listener. A connection that opens with `CONNECT ` has its head read here and goes straight
 * to the tunnel code: most connections through a sidecar are tunnels, and Node's HTTP server
 * costs a parser, connection tracking and extra timers per connection just to hand them over.
 * Every other connection (plain-HTTP forwards, and anything malformed from its first bytes) is
 * handed to the HTTP server with the bytes read so far, and is answered exactly as before.
 */
export function createFrontServer(ctx: ProxyContext, http: HttpServer): Server {
  // allowHalfOpen: a client's FIN must not end our side before the tunnel has passed it on.
  // Shared listeners, not closures per connection: a closure made in accept() would keep that
  // call's whole scope (the head reader and its bytes) alive for the tunnel's lifetime.
  const forget = function (this: Socket) {
    ctx.clientSockets.delete(this);
  };
  const front = createServer({ allowHalfOpen: true, noDelay: true }, (socket) => {
    ctx.clientSockets.add(socket);
    socket.once('close', forget);
    socket.on('error', destroyOnError);
    accept(ctx, http, socket);
  });
  // Client connections are bounded (tunnels, forwards and idle keep-alives together). One over
  // the bound is closed by Node before anything reads it, so no decision line is written for it.
  front.maxConnections = ctx.options.maxTunnels * 2 + 64;
  if (ctx.notice) reportDrops(front, ctx.notice);
  return front;
}

/** How long drops are counted before one notice says how many: a flood costs one line a second. */
const DROP_NOTICE_MS = 1000;

/** Says on stderr that connections were dropped over the bound, and what to do. */
function reportDrops(front: Server, notice: (event: Record<string, unknown>) => void): void {
  let dropped = 0;
  front.on('drop', () => {
    if (dropped++ > 0) return;
    setTimeout(() => {
      notice({
        event: 'connections-dropped',
        count: dropped,
        limit: front.maxConnections,
        message: `${dropped} client connection(s) were closed unanswered: the proxy holds at most ${front.maxConnections} at once (2 x --max-tunnels + 64). Close idle connections, or run it with a higher --max-tunnels`,
      });
      dropped = 0;
    }, DROP_NOTICE_MS).unref();
  });
}

function destroyOnError(this: Socket) {
  this.destroy();
}

/** Header deadlines of connections handed to the HTTP server before their first head was read. */
const handedOver = new WeakMap<Socket, NodeJS.Timeout>();

/**
 * The HTTP server has read a connection's first head (or refused it): the deadline carried over
 * from the front is met. Later heads on the connection are the HTTP server's own `headersTimeout`.
 */
export function firstHeadRead(socket: Socket): void {
  const timer = handedOver.get(socket);
  if (timer !== undefined) {
    clearTimeout(timer);
    handedOver.delete(socket);
  }
}

function accept(ctx: ProxyContext, http: HttpServer, socket: Socket): void {
  const headerTimeoutMs = ctx.options.headerTimeoutMs;
  const deadline = Date.now() + headerTimeoutMs;
  let pending: Buffer | undefined;
  let reader: ConnectHeadReader | undefined;

  const stop = () => {
    socket.off('data', onData);
    socket.off('end', onEnd);
    socket.setTimeout(0, onTimeout);
  };
  const refuse = (status: number, reason: string) => {
    stop();
    ctx.log.decision({ method: '', host: '', port: 0, allowed: false, reason, status });
    refuseRaw(socket, status, reason);
  };
  function onTimeout() {
    refuse(408, 'header-timeout');
  }
  function onEnd() {
    // A client that gave up before sending anything is no request; a cut head is a bad one.
    if (pending === undefined && reader === undefined) {
      stop();
      socket.destroy();
    } else refuse(400, 'malformed-request');
  }
  function onData(chunk: Buffer) {
    if (reader === undefined) {
      const bytes = pending === undefined ? chunk : Buffer.concat([pending, chunk]);
      const connect = startsConnect(bytes);
      if (connect === undefined) {
        pending = bytes;
        return waitForMore();
      }
      pending = undefined;
      if (!connect) {
        stop();
        handOver(ctx, http, socket, bytes, deadline);
        return;
      }
      reader = new ConnectHeadReader(ctx.options.maxHeaderBytes);
      chunk = bytes;
    }
    const outcome = reader.push(chunk);
    if (outcome === null) return waitForMore();
    if (outcome.kind === 'refuse') return refuse(outcome.status, outcome.reason);
    stop();
    reader = undefined;
    socket.off('error', destroyOnError);
    // Bytes after the head wait in the socket, in order, until the relay reads them.
    socket.pause();
    handleConnect(ctx, outcome.target, outcome.rawHeaders, socket, outcome.rest).catch(() =>
      socket.destroy(),
    );
  }
  // A head split over several reads: the socket's inactivity timer restarts on every read, so it
  // is set again to what is left of the deadline, which runs from the connection (a client that
  // trickles bytes gets no more time than one that sends nothing).
  function waitForMore() {
    const left = deadline - Date.now();
    if (left <= 0) onTimeout();
    else socket.setTimeout(left);
  }
  socket.on('data', onData);
  socket.on('end', onEnd);
  // The socket's own timer is the header deadline: no extra timer object per connection.
  socket.setTimeout(headerTimeoutMs, onTimeout);
}

function handOver(
  ctx: ProxyContext,
  http: HttpServer,
  socket: Socket,
  bytes: Buffer,
  deadline: number,
): void {
  // The HTTP server handles this socket's errors from here on, as it did before the front existed.
  socket.off('error', destroyOnError);
  socket.pause();
  socket.unshift(bytes);
  // The header deadline runs from the connection, not from the hand-over: a client must not
  // earn a second window by sending its first bytes slowly.
  const timer = setTimeout(
    () => {
      handedOver.delete(socket);
      if (socket.destroyed) return;
      ctx.log.decision({
        method: '',
        host: '',
        port: 0,
        allowed: false,
        reason: 'header-timeout',
        status: 408,
      });
      refuseRaw(socket, 408, 'header-timeout');
    },
    Math.max(0, deadline - Date.now()),
  );
  handedOver.set(socket, timer);
  socket.once('close', () => firstHeadRead(socket));
  http.emit('connection', socket);
  socket.resume();
}
