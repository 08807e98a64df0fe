// A loopback reverse proxy that adds `Authorization: Bearer TOKEN` to every request, because the
// conformance suite (0.1.16) has no way to send a header and `ringfence mcp serve --http` refuses
// requests without a token. It is transparent otherwise: method, path, body, the other headers,
// status and streamed (SSE) answers pass through as they are, and a client that goes away closes
// its upstream request, so the gateway sees the same disconnects the client made.
//
// Host and Origin: the gateway refuses a Host or Origin that does not name its own address (DNS
// rebinding), and the suite sends the address it was given, which is the proxy's. So a Host or
// Origin naming the proxy itself is rewritten to name the gateway, keeping the hostname the
// client used; any other value (the suite's evil.example.com) reaches the gateway unchanged, so
// the gateway's own rebinding check is what the suite measures.
import { createServer, request as httpRequest } from 'node:http';

// Hop-by-hop headers (RFC 9110 7.6.1) belong to one connection, not to the request.
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/** `host:port` with the port replaced when `host` names `from` (same port, any hostname). */
function retarget(authority, fromPort, toPort) {
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(authority);
  if (!match || Number(match[2]) !== fromPort) return authority;
  return `${match[1]}:${toPort}`;
}

/**
 * The headers sent upstream for one client request: hop-by-hop headers dropped, the bearer token
 * set (replacing any the client sent), Host/Origin naming the proxy's port moved to the target's.
 */
export function upstreamHeaders(headers, { token, proxyPort, targetPort }) {
  /** @type {import('node:http').OutgoingHttpHeaders} */
  const out = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name)) continue;
    out[name] = value;
  }
  if (typeof out.host === 'string') out.host = retarget(out.host, proxyPort, targetPort);
  if (typeof out.origin === 'string') {
    try {
      const origin = new URL(out.origin);
      if (origin.protocol === 'http:' && origin.port !== '' && Number(origin.port) === proxyPort) {
        out.origin = `http://${retarget(origin.host, proxyPort, targetPort)}`;
      }
    } catch {
      // Not a URL: passed on as it is, for the gateway to judge.
    }
  }
  out.authorization = `Bearer ${token}`;
  return out;
}

/**
 * Start the proxy on 127.0.0.1 (any free port) in front of `target` (an http://127.0.0.1:PORT/…
 * URL). Resolves to { url, close }: `url` is the target's path on the proxy.
 */
export async function startAuthProxy({ target, token }) {
  const targetUrl = new URL(target);
  if (targetUrl.protocol !== 'http:') throw new Error(`the proxy forwards to http:// only, not ${target}`);
  const targetPort = Number(targetUrl.port || 80);
  let proxyPort = 0;
  const open = new Set();

  const server = createServer((req, res) => {
    const upstream = httpRequest(
      {
        host: targetUrl.hostname.replace(/^\[(.*)\]$/, '$1'),
        port: targetPort,
        method: req.method,
        path: req.url,
        headers: upstreamHeaders(req.headers, { token, proxyPort, targetPort }),
      },
      (answer) => {
        /** @type {import('node:http').OutgoingHttpHeaders} */
        const headers = {};
        for (const [name, value] of Object.entries(answer.headers)) {
          if (value !== undefined && !HOP_BY_HOP.has(name)) headers[name] = value;
        }
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, headers);
        // Event streams must reach the client as they come, not when the gateway ends them.
        res.flushHeaders();
        answer.pipe(res);
        answer.on('error', () => res.destroy());
      },
    );
    open.add(upstream);
    upstream.on('close', () => open.delete(upstream));
    upstream.on('error', (error) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`conformance auth proxy: ${target} did not answer: ${error.message}\n`);
      } else res.destroy();
    });
    // The client went away (closed an SSE stream, or its request was cancelled): so does ours.
    res.on('close', () => {
      if (!res.writableFinished) upstream.destroy();
    });
    req.pipe(upstream);
  });

  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1' }, () => resolve(undefined));
  });
  proxyPort = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${proxyPort}${targetUrl.pathname}${targetUrl.search}`,
    port: proxyPort,
    close: async () => {
      for (const upstream of open) upstream.destroy();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve(undefined)));
    },
  };
}
