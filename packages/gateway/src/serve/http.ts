import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { isIP } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { RingfenceError } from '@ringfence/policy';
import { createEndpointServer } from './endpoint.js';
import type { Gateway } from './gateway.js';

export class ListenError extends RingfenceError<'LISTEN_NOT_LOOPBACK' | 'LISTEN_ADDRESS'> {}

export interface Identity {
  readonly agent?: string;
  readonly scope?: string;
}

/** Resolves a bearer token to an identity, or undefined when the token is not known. */
export type TokenResolver = (token: string) => Identity | undefined | Promise<Identity | undefined>;

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

const sha256 = (value: string) => createHash('sha256').update(value).digest();

/** Constant-time comparison of a presented token with the expected one (hashes equalise lengths). */
export function tokensEqual(presented: string, expected: string): boolean {
  return timingSafeEqual(sha256(presented), sha256(expected));
}

export function generateToken(): string {
  return randomBytes(32).toString('base64url');
}

function refuse(res: ServerResponse, status: number, message: string): void {
  res.writeHead(status, {
    'content-type': 'application/json',
    ...(status === 401 ? { 'www-authenticate': 'Bearer' } : {}),
  });
  res.end(JSON.stringify({ jsonrpc: '2.0', error: { code: -32001, message }, id: null }));
}

interface Session {
  readonly transport: StreamableHTTPServerTransport;
  /** Hash of the token that opened the session: another token cannot use it. */
  readonly tokenHash: Buffer;
}

/**
 * Serve the gateway over streamable HTTP. Every request needs `Authorization: Bearer TOKEN`;
 * Host must name the listening address and Origin, when sent, must be that same origin (DNS
 * rebinding); a session stays bound to the token that opened it.
 */
export async function serveHttp(
  gateway: Gateway,
  options: { address: string; insecureListen?: boolean; resolveToken: TokenResolver },
): Promise<{ server: HttpServer; url: string; close(): Promise<void> }> {
  const { host, port } = parseListenAddress(options.address);
  if (!isLoopbackAddress(host) && !options.insecureListen) {
    throw new ListenError(
      'LISTEN_NOT_LOOPBACK',
      `Refusing to listen on ${host}: only loopback addresses are allowed, because anyone who can reach the port can try tokens. Use 127.0.0.1, or pass --insecure-listen if you really mean it.`,
    );
  }
  const sessions = new Map<string, Session>();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(error as Error).message}`);
      else res.end();
    });
  });

  const allowedHosts = (actualPort: number) =>
    new Set(
      [host, 'localhost', '127.0.0.1', '[::1]']
        .filter((h) => h === host || isLoopbackAddress(host))
        .map((h) => `${isIP(h) === 6 ? `[${h}]` : h}:${actualPort}`.toLowerCase()),
    );

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const actualPort = (server.address() as { port: number }).port;
    const hosts = allowedHosts(actualPort);
    const hostHeader = req.headers.host?.toLowerCase();
    if (!hostHeader || !hosts.has(hostHeader))
      return refuse(
        res,
        403,
        'Host header does not name this gateway; connect to the address it listens on (127.0.0.1 or localhost and its port).',
      );
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost: string | undefined;
      try {
        const url = new URL(origin);
        originHost = url.protocol === 'http:' ? url.host.toLowerCase() : undefined;
      } catch {
        originHost = undefined;
      }
      if (!originHost || !hosts.has(originHost))
        return refuse(
          res,
          403,
          `Origin ${origin} is not allowed: only clients on this gateway's own origin may call it (a web page elsewhere may not).`,
        );
    }
    const authorization = req.headers.authorization ?? '';
    const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(authorization);
    // Resolved on every request, so a removed agent's token stops working at once.
    const identity = match ? await options.resolveToken(match[1]!) : undefined;
    if (!match || !identity) {
      return refuse(res, 401, 'A valid bearer token is required (Authorization: Bearer TOKEN).');
    }
    const tokenHash = sha256(match[1]!);
    const sessionId = req.headers['mcp-session-id'];
    if (typeof sessionId === 'string') {
      const session = sessions.get(sessionId);
      if (!session) return refuse(res, 404, 'Unknown or expired session; initialise again.');
      if (!timingSafeEqual(session.tokenHash, tokenHash))
        return refuse(res, 403, 'This session belongs to another token.');
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return refuse(res, 400, 'Initialise a session with POST first.');
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, tokenHash });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = createEndpointServer(gateway, identity);
    await mcp.connect(transport);
    await transport.handleRequest(req, res);
    // Not an initialisation after all: nothing may linger for a request that opened no session.
    if (!transport.sessionId) await mcp.close().catch(() => {});
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = server.address() as { port: number };
  const url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${actual.port}/mcp`;
  return {
    server,
    url,
    close: async () => {
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => {})));
      sessions.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
