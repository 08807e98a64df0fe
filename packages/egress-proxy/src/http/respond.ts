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

function body(reason: string): string {
  return `ringfence-egress-proxy: ${reason}\n`;
}

/**
 * Writes a refusal on a raw socket (CONNECT, upgrade, parse errors) and closes it. Refusals
 * always close: the rest of the stream may be a smuggled request or an unread body.
 */
export function refuseRaw(socket: Duplex, status: number, reason: string): void {
  if (socket.destroyed) return;
  const text = body(reason);
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
  const text = body(reason);
  res.shouldKeepAlive = false;
  res.writeHead(status, {
    'Content-Type': 'text/plain; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    Connection: 'close',
  });
  res.end(text);
}
