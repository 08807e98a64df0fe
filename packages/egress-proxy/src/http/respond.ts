import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

export const STATUS_TEXT: Readonly<Record<number, string>> = {
  200: 'Connection Established',
  400: 'Bad Request',
  403: 'Forbidden',
  408: 'Request Timeout',
  429: 'Too Many Requests',
  431: 'Request Header Fields Too Large',
  502: 'Bad Gateway',
  504: 'Gateway Timeout',
};

/** `mcp add`'s words for registering a contained server again with more egress. */
const REGISTER_AGAIN =
  'register the server again with it (ringfence mcp rm NAME, then ringfence mcp add NAME …';

/**
 * What happened and what to do, by refusal. The reader is whoever sees the client's error (the
 * server's log, its answer to the model) or the sidecar's: the reason code alone names neither.
 */
function explain(status: number, reason: string): string {
  if (reason === 'ip-literal')
    return `the proxy connects to host names only, never to an address given directly. Use the host's name; if the server needs it, ${REGISTER_AGAIN} --egress-allow HOST)`;
  if (reason.startsWith('forbidden-address:'))
    return `the name resolves to an internal address (${reason.slice('forbidden-address:'.length)}), which a host allowlist does not open. If the server must reach it, ${REGISTER_AGAIN} --egress-allow HOST --egress-allow-address CIDR)`;
  // A 502 of the proxy's own making: the host is not at fault.
  if (reason === 'internal-error')
    return "the proxy failed on this request, not the host. Retry; if it recurs, read the internal-error event on the sidecar's stderr (ringfence mcp ls shows where it is kept)";
  switch (status) {
    case 400:
      return 'the request is not one this proxy forwards. Send HTTPS as CONNECT HOST:PORT and plain HTTP in absolute form (GET http://HOST/PATH) with one Host header naming the same host, without Upgrade and with unambiguous framing; HTTP clients do this when HTTPS_PROXY and HTTP_PROXY point at the proxy';
    case 403:
      return `the host or port is not on this server's egress allowlist. If the server needs it, ${REGISTER_AGAIN} --egress-allow HOST[:PORT]); under an organisation policy, its mcp[].egress_allow must allow it too`;
    case 408:
      return 'the request head did not arrive in time. Send the whole head at once, within the header timeout';
    case 417:
      return 'only "Expect: 100-continue" is supported. Send the request without that Expect header';
    case 429:
      return 'the proxy has as many tunnels open as it allows. Close idle connections, or retry once some have ended';
    case 431:
      return 'the request head is over 16 KiB or 100 header fields. Send fewer or shorter headers';
    case 502:
    case 504:
      return 'the host could not be reached through the proxy (its name did not resolve, or it did not answer). Check the host name and that it is up, then retry';
    default:
      return 'the request was refused';
  }
}

function body(status: number, reason: string): string {
  return `ringfence-egress-proxy: refused (${reason}): ${explain(status, reason)}.\n`;
}

/**
 * Writes a refusal on a raw socket (CONNECT, upgrade, parse errors) and closes it. Refusals
 * always close: the rest of the stream may be a smuggled request or an unread body.
 */
export function refuseRaw(socket: Duplex, status: number, reason: string): void {
  if (socket.destroyed) return;
  const text = body(status, reason);
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_TEXT[status] ?? 'Error'}\r\n` +
      `Content-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(text)}\r\n` +
      `Connection: close\r\n\r\n${text}`,
  );
  // A peer that never reads would keep the socket half-open forever.
  setTimeout(() => socket.destroy(), 2000).unref();
}

export function refuseResponse(res: ServerResponse, status: number, reason: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const text = body(status, reason);
  res.shouldKeepAlive = false;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    Connection: 'close',
  });
  res.end(text);
}
