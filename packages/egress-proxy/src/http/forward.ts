import { type IncomingMessage, request, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { decide } from '../matching/decide.js';
import { parseForwardTarget, parseHostHeader } from '../matching/target.js';
import { peerProblem } from '../tunnel/dial.js';
import type { ProxyContext } from './context.js';
import { framingProblem, headerValues, stripHopByHop } from './headers.js';
import { refuseResponse } from './respond.js';

/**
 * Handles one plain-HTTP proxy request (absolute `http://` URI). Every request on a keep-alive
 * connection goes through the full decision again: an allowed first request buys nothing.
 */
export async function handleForward(ctx: ProxyContext, req: IncomingMessage, res: ServerResponse) {
  const method = req.method ?? '';
  const parsed = parseForwardTarget(req.url ?? '');
  const host = parsed?.target.host ?? '';
  const port = parsed?.target.port ?? 0;
  const refuse = (status: number, reason: string, address?: string) => {
    ctx.log.decision({ method, host, port, allowed: false, reason, ...(address ? { address } : {}), status });
    refuseResponse(res, status, reason);
  };
  if (!parsed) return refuse(400, 'not-a-proxy-request');
  if (req.headers.upgrade !== undefined || method === 'PRI') return refuse(400, 'upgrade-refused');
  const framing = framingProblem(req.rawHeaders);
  if (framing) return refuse(400, framing);
  if (parsed.target.kind === 'malformed') return refuse(400, parsed.target.reason);
  const hostHeaders = headerValues(req.rawHeaders, 'host');
  if (hostHeaders.length === 0) return refuse(400, 'missing-host');
  if (hostHeaders.length > 1) return refuse(400, 'duplicate-host');
  const fromHeader = parseHostHeader(hostHeaders[0] ?? '');
  if (fromHeader.kind !== parsed.target.kind || fromHeader.host !== host || fromHeader.port !== port) {
    return refuse(400, 'host-mismatch');
  }
  if (req.rawHeaders.length / 2 > ctx.options.maxHeaderCount) return refuse(431, 'too-many-headers');

  const verdict = await decide(parsed.target, ctx);
  if (!verdict.allowed) return refuse(verdict.status, verdict.reason, verdict.address);
  const address = verdict.addresses[0] ?? '';

  const headers = stripHopByHop(req.rawHeaders);
  const upstream = request({
    host: address,
    port,
    method,
    path: parsed.path,
    headers,
    setHost: false,
    agent: ctx.agent,
  });
  let settled = false;
  // Once the vetted connection is up the request (and any body) is on its way: from then on the
  // decision line must say allowed, whatever happens to the answer.
  let sent = false;
  const fail = (status: number, reason: string) => {
    if (settled) {
      // Mid-body: the status line is gone already, so the only honest signal left is a reset.
      upstream.destroy();
      res.destroy();
      return;
    }
    settled = true;
    upstream.destroy();
    if (!sent) return refuse(status, reason, address);
    ctx.log.decision({ method, host, port, allowed: true, reason: `sent-then-${reason}`, address, status });
    if (!res.destroyed && !res.headersSent) refuseResponse(res, status, reason);
    else res.destroy();
  };
  upstream.on('socket', (socket: Socket) => {
    if (!socket.connecting) {
      // A kept-alive socket to this same vetted address: it was checked when it connected.
      sent = true;
      return;
    }
    const timer = setTimeout(() => fail(504, 'connect-timeout'), ctx.options.connectTimeoutMs);
    socket.once('connect', () => {
      clearTimeout(timer);
      const problem = peerProblem(socket, address, port, ctx.policy);
      if (problem) fail(problem === 'peer-mismatch' ? 502 : 403, problem);
      else sent = true;
    });
    socket.once('close', () => clearTimeout(timer));
  });
  // A silent origin must not hold a client forever: the agent's socket timeout (set once per
  // upstream socket, not per request) surfaces here. Redirects are never followed because this
  // is a single request/response relay: no redirect handling exists to follow them.
  upstream.once('timeout', () => fail(504, 'upstream-timeout'));
  upstream.on('error', (err: NodeJS.ErrnoException) => {
    if (settled) {
      res.destroy();
      return;
    }
    fail(502, err.code === 'ECONNREFUSED' ? 'connect-failed' : 'upstream-error');
  });
  upstream.on('response', (upRes) => {
    if (settled) {
      upRes.destroy();
      return;
    }
    const status = upRes.statusCode ?? 0;
    // An origin's status line is not trusted to be writable: a status outside 100-599 (or a
    // reason phrase Node refuses to write) must cost this request, not the proxy.
    if (status < 100 || status > 599) {
      upRes.destroy();
      return fail(502, 'bad-upstream-response');
    }
    try {
      res.writeHead(status, stripHopByHop(upRes.rawHeaders));
    } catch {
      upRes.destroy();
      return fail(502, 'bad-upstream-response');
    }
    settled = true;
    ctx.log.decision({ method, host, port, allowed: true, reason: 'allowed', address, status });
    upRes.pipe(res);
    upRes.on('error', () => res.destroy());
  });
  res.on('close', () => {
    if (!res.writableFinished) upstream.destroy();
  });
  // Most proxied requests carry no body; ending directly skips a pipe's listeners and a tick.
  const hasBody =
    req.headers['transfer-encoding'] !== undefined || (req.headers['content-length'] ?? '0') !== '0';
  if (hasBody) req.pipe(upstream);
  else upstream.end();
}
