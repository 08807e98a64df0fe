import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type { ProxyContext } from '../http/context.js';
import { connectFramingProblem, countHeader } from '../http/headers.js';
import { refuseRaw } from '../http/respond.js';
import { decide } from '../matching/decide.js';
import { parseConnectTarget } from '../matching/target.js';
import { dialVetted } from './dial.js';
import type { DownstreamReader } from './downstream.js';

/**
 * Handles one CONNECT request, read by the proxy's own head reader or by Node's HTTP server (a
 * CONNECT after other requests on a keep-alive connection): decide, dial the vetted address, then
 * relay bytes both ways with half-close preserved (TLS close_notify and request/response
 * protocols depend on it).
 */
export async function handleConnect(
  ctx: ProxyContext,
  requestTarget: string,
  rawHeaders: readonly string[],
  client: Duplex,
  head: Buffer,
) {
  client.on('error', () => client.destroy());
  const method = 'CONNECT';
  const started = Date.now();
  const target = parseConnectTarget(requestTarget);
  const host = target.host;
  const port = target.port;
  const refuse = (status: number, reason: string, address?: string) => {
    ctx.log.decision({ method, host, port, allowed: false, reason, ...(address ? { address } : {}), status });
    refuseRaw(client, status, reason);
  };
  if (countHeader(rawHeaders, 'host') > 1) return refuse(400, 'duplicate-host');
  if (rawHeaders.length / 2 > ctx.options.maxHeaderCount) return refuse(431, 'too-many-headers');
  const framing = connectFramingProblem(rawHeaders);
  if (framing) return refuse(400, framing);
  // Pending tunnels count against the cap too, so a burst cannot pile up DNS queries and dials.
  if (ctx.tunnels.size >= ctx.options.maxTunnels) return refuse(429, 'tunnel-limit');
  const slot = Symbol('tunnel');
  ctx.tunnels.add(slot);
  let released = false;
  const release = () => {
    if (!released) {
      released = true;
      ctx.tunnels.delete(slot);
    }
  };
  try {
    const verdict = await decide(target, ctx);
    if (!verdict.allowed) {
      release();
      return refuse(verdict.status, verdict.reason, verdict.address);
    }
    const dialled = await dialVetted(verdict.addresses, port, ctx.options.connectTimeoutMs, ctx.policy);
    if (!dialled.ok) {
      release();
      return refuse(dialled.status, dialled.reason, dialled.address);
    }
    const upstream = dialled.socket;
    if (client.destroyed || !client.writable) {
      upstream.destroy();
      release();
      ctx.log.decision({
        method,
        host,
        port,
        allowed: false,
        reason: 'client-closed',
        address: dialled.address,
        status: 499,
      });
      return;
    }
    ctx.log.decision({
      method,
      host,
      port,
      allowed: true,
      reason: 'allowed',
      address: dialled.address,
      status: 200,
    });
    relay(ctx, client as Socket, upstream, dialled.reader, head, host, port, started, release);
  } catch {
    release();
    refuse(502, 'internal-error');
  }
}

const ESTABLISHED = Buffer.from('HTTP/1.1 200 Connection Established\r\n\r\n', 'latin1');

function relay(
  ctx: ProxyContext,
  client: Socket,
  upstream: Socket,
  reader: DownstreamReader,
  head: Buffer,
  host: string,
  port: number,
  started: number,
  release: () => void,
) {
  let open = 2;
  const idle = ctx.options.idleTimeoutMs;
  const onIdle = () => {
    client.destroy();
    upstream.destroy();
  };
  const onClose = (hadError: boolean) => {
    open -= 1;
    if (client.destroyed) ctx.tunnelSockets.delete(client);
    if (upstream.destroyed) ctx.tunnelSockets.delete(upstream);
    if (open > 0) {
      // A reset on one side is passed on as a teardown of the other; a clean close lets the
      // other side drain what it still has to write, bounded by the idle timeout.
      if (hadError) {
        client.destroy();
        upstream.destroy();
      } else if (!upstream.destroyed) {
        upstream.setTimeout(idle, onIdle);
      }
      return;
    }
    release();
    ctx.log.close({
      host,
      port,
      bytes_in: upstream.bytesRead,
      bytes_out: upstream.bytesWritten,
      duration_ms: Date.now() - started,
    });
  };
  client.once('close', onClose);
  upstream.once('close', onClose);
  ctx.tunnelSockets.add(client).add(upstream);
  upstream.on('error', () => client.destroy());
  client.on('error', () => upstream.destroy());
  // One timer per tunnel: every byte in either direction is a read or a write on the client
  // socket, and Node refreshes a socket's timeout on both.
  client.setTimeout(idle, onIdle);
  client.setNoDelay(true);
  client.write(ESTABLISHED);
  if (head.length > 0) upstream.write(head);
  // A client that sent its data and FIN with the CONNECT itself: Node consumed that end before
  // this relay existed, so pass it on here or the half-close is lost.
  if (client.readableEnded) upstream.end();
  forward(client, upstream);
  reader.attach(upstream, client);
  // Read with onread, the upstream emits 'end' without waiting for anyone to consume bytes: an
  // end that came before this relay existed is passed on here, after the early bytes.
  if (upstream.readableEnded) client.end();
  else upstream.once('end', () => client.end());
  // The proxy's head reader pauses the client once the head is read, so bytes sent before the 200
  // wait in order behind `head`; a listener alone does not restart an explicitly paused stream.
  client.resume();
}

/**
 * The client → upstream half: pipe() without its bookkeeping (six listeners and unpipe handling
 * per direction): data with backpressure, and end() on end, which is exactly a half-close. Errors
 * are handled above. (The upstream → client half is the DownstreamReader, downstream.ts: only a
 * socket we dial can be read with `onread`, and downloads are where the bytes are.)
 */
function forward(from: Socket, to: Socket): void {
  const resume = () => from.resume();
  from.on('data', (chunk: Buffer) => {
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', resume);
    }
  });
  from.once('end', () => to.end());
}
