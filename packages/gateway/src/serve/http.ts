import { randomUUID, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { isIP } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import {
  allowedHosts,
  assertLoopbackListen,
  checkHostAndOrigin,
  parseListenAddress,
  sha256,
} from '../local-http/guard.js';
import { createEndpointServer } from './endpoint.js';
import type { Gateway } from './gateway.js';

export {
  generateToken,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  tokensEqual,
} from '../local-http/guard.js';

export interface Identity {
  readonly agent?: string;
  readonly scope?: string;
}

/** Resolves a bearer token to an identity, or undefined when the token is not known. */
export type TokenResolver = (token: string) => Identity | undefined | Promise<Identity | undefined>;

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
  assertLoopbackListen(host, options.insecureListen);
  const sessions = new Map<string, Session>();
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(error as Error).message}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const actualPort = (server.address() as { port: number }).port;
    const refused = checkHostAndOrigin(req, allowedHosts(host, actualPort), 'gateway');
    if (refused) return refuse(res, refused.status, refused.message);
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
