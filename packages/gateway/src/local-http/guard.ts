/**
 * The protections every local HTTP surface of ringfence shares (`mcp serve --http`, `console`):
 * loopback-only listening, a random token compared in constant time, and Host and Origin checks
 * against DNS rebinding (a page on another site that resolves its own name to 127.0.0.1 sends its
 * own Host, and a browser sends its Origin).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { isIP } from 'node:net';
import { RingfenceError } from '@ringfence/policy';

export class ListenError extends RingfenceError<'LISTEN_NOT_LOOPBACK' | 'LISTEN_ADDRESS'> {}

export function parseListenAddress(address: string): { host: string; port: number } {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address.trim());
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  if (!host || !Number.isInteger(port) || port > 65535) {
    throw new ListenError('LISTEN_ADDRESS', `"${address}" is not HOST:PORT (e.g. 127.0.0.1:8765).`);
  }
  return { host, port };
}

export function isLoopbackAddress(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1';
}

/**
 * Refuses a non-loopback address unless the person passed `--insecure-listen`: anyone who can
 * reach the port can try tokens.
 */
export function assertLoopbackListen(host: string, insecureListen: boolean | undefined): void {
  if (isLoopbackAddress(host) || insecureListen) return;
  throw new ListenError(
    'LISTEN_NOT_LOOPBACK',
    `Refusing to listen on ${host}: only loopback addresses are allowed, because anyone who can reach the port can try tokens. Use 127.0.0.1, or pass --insecure-listen if you really mean it.`,
  );
}

export const sha256 = (value: string): Buffer => createHash('sha256').update(value).digest();

/** Constant-time comparison of a presented token with the expected one (hashes equalise lengths). */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(expected));
}

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

/** `host:port` forms a browser or client may send in Host for a server listening on `host`. */
export function allowedHosts(host: string, port: number): ReadonlySet<string> {
  return new Set(
    [host, 'localhost', '127.0.0.1', '[::1]']
      .filter((h) => h === host || isLoopbackAddress(host))
      .map((h) => `${isIP(h) === 6 ? `[${h}]` : h}:${port}`.toLowerCase()),
  );
}

/** A request refused before anything else looks at it: the status and what to tell the caller. */
export interface Refusal {
  readonly status: 403;
  readonly message: string;
}

/**
 * Host must name the listening address, and Origin, when sent, must be that same `http://`
 * origin. `what` names the surface in the messages ("gateway", "console").
 */
export function checkHostAndOrigin(
  req: IncomingMessage,
  hosts: ReadonlySet<string>,
  what: string,
): Refusal | undefined {
  const hostHeader = req.headers.host?.toLowerCase();
  if (!hostHeader || !hosts.has(hostHeader))
    return {
      status: 403,
      message: `Host header does not name this ${what}; connect to the address it listens on (127.0.0.1 or localhost and its port).`,
    };
  const origin = req.headers.origin;
  if (origin === undefined) return undefined;
  let originHost: string | undefined;
  try {
    const url = new URL(origin);
    originHost = url.protocol === 'http:' ? url.host.toLowerCase() : undefined;
  } catch {
    originHost = undefined;
  }
  if (!originHost || !hosts.has(originHost))
    return {
      status: 403,
      message: `Origin ${origin} is not allowed: only clients on this ${what}'s own origin may call it (a web page elsewhere may not).`,
    };
  return undefined;
}
