import { randomUUID, timingSafeEqual } from 'node:crypto';
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { isIP } from 'node:net';
import { classifyInboundRequest, isJsonContentType } from '@modelcontextprotocol/server';
import {
  allowedHosts,
  assertLoopbackListen,
  checkHostAndOrigin,
  parseListenAddress,
  sha256,
} from '../local-http/guard.js';
import { answerHealthProbe } from '../local-http/health.js';
import { readBoundedBody } from '../util/bounded-body.js';
import { createEndpointServer } from './endpoint.js';
import type { Gateway } from './gateway.js';
import { createModernHandler, serveModern } from './http-modern.js';
import { HEADER_MISMATCH, paramHeaderMismatch } from './http-param-headers.js';
import { HttpSessionTransport, jsonError, MAX_REQUEST_BODY_BYTES } from './http-transport.js';

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
  jsonError(res, status, -32001, message, status === 401 ? { 'www-authenticate': 'Bearer' } : {});
}

interface Session {
  readonly transport: HttpSessionTransport;
  /** Hash of the token that opened the session: another token cannot use it. */
  readonly tokenHash: Buffer;
  /** When its last request ended (or began, while one is open); idle sessions expire. */
  lastSeen: number;
  /** POST/DELETE requests not yet answered: such a session is not evicted. */
  busy: number;
  /** Open GET streams: a client still listening, so the session is not idle either. */
  streams: number;
}

/** Limits on sessions (`mcp serve --session-idle`, `--max-sessions`). */
export interface SessionLimits {
  /** A session with no request for this long is closed. Default 30 minutes. */
  readonly idleMs?: number;
  /** Sessions one token may hold; a new one evicts that token's least recently used idle one. Default 32. */
  readonly perToken?: number;
  /** Bytes an answer stream may hold unsent for a client that does not read (tests lower it). */
  readonly maxUnsentBytes?: number;
  /** Bounds of each session's replay buffer for Last-Event-ID (tests lower them). */
  readonly replayEvents?: number;
  readonly replayBytes?: number;
  readonly keepAliveMs?: number;
}

export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;
export const DEFAULT_SESSIONS_PER_TOKEN = 32;

/** `{ [key]: value }` when there is a value: optional properties stay absent, never undefined. */
const optional = <K extends string>(key: K, value: string | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, string>>;

/**
 * Serve the gateway over streamable HTTP. Every request needs `Authorization: Bearer TOKEN`;
 * Host must name the listening address and Origin, when sent, must be that same origin (DNS
 * rebinding); a session stays bound to the token that opened it.
 */
export async function serveHttp(
  gateway: Gateway,
  options: {
    address: string;
    insecureListen?: boolean;
    resolveToken: TokenResolver;
    sessions?: SessionLimits;
    /** Whether the gateway can serve, for `GET /healthz` (no token, nothing revealed); default: yes. */
    serving?: () => boolean;
  },
): Promise<{
  server: HttpServer;
  url: string;
  sessionCount(): number;
  /** Requests of every session still waiting for their response. */
  pendingRequests(): number;
  /** Events every session keeps for a resume, and their bytes. */
  keptEvents(): { events: number; bytes: number };
  close(): Promise<void>;
}> {
  const { host, port } = parseListenAddress(options.address);
  assertLoopbackListen(host, options.insecureListen);
  const modern = createModernHandler(gateway);
  const sessions = new Map<string, Session>();
  /** Open 2026 `subscriptions/listen` streams per token (its SHA-256, hex). */
  const listens = new Map<string, number>();
  const idleMs = options.sessions?.idleMs ?? DEFAULT_SESSION_IDLE_MS;
  const perToken = options.sessions?.perToken ?? DEFAULT_SESSIONS_PER_TOKEN;
  const expire = (id: string, session: Session) => {
    sessions.delete(id);
    void session.transport.close().catch(() => {});
  };
  // An abandoned session (a client that went away without DELETE) would otherwise be kept forever.
  const sweeper = setInterval(
    () => {
      const now = Date.now();
      for (const [id, session] of sessions) {
        if (session.busy + session.streams === 0 && now - session.lastSeen >= idleMs) expire(id, session);
      }
    },
    Math.max(1_000, Math.min(60_000, idleMs / 4)),
  );
  sweeper.unref();
  /** Room for one more session of this token: evicts its least recently used idle one when full. */
  const makeRoom = (tokenHash: Buffer): boolean => {
    const mine = [...sessions].filter(([, s]) => s.tokenHash.equals(tokenHash));
    if (mine.length < perToken) return true;
    const idle = mine.filter(([, s]) => s.busy === 0).sort(([, a], [, b]) => a.lastSeen - b.lastSeen)[0];
    if (!idle) return false;
    expire(...idle);
    return true;
  };
  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) refuse(res, 500, `internal error: ${(error as Error).message}`);
      else res.end();
    });
  });

  // Set once listening (the port may have been chosen by the system).
  let hosts: ReadonlySet<string> = new Set();
  const serving = options.serving ?? (() => true);
  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // Before the Host check: a load balancer names the address it knows, and the answer reveals
    // nothing (docs/operations.md, "Health"). Exactly `GET /healthz`; anything else goes on below.
    if (answerHealthProbe(req, res, serving)) return;
    const refused = checkHostAndOrigin(req, hosts, 'gateway');
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
      const kind = req.method === 'GET' ? 'streams' : 'busy';
      session[kind] += 1;
      session.lastSeen = Date.now();
      res.once('close', () => {
        session[kind] -= 1;
        session.lastSeen = Date.now();
      });
      await session.transport.handleRequest(req, res);
      return;
    }
    if (req.method !== 'POST') return refuse(res, 400, 'Initialise a session with POST first.');
    // Read once, bounded, to tell a 2025 client opening a session from a 2026 client's request.
    const read = await readBoundedBody(req, MAX_REQUEST_BODY_BYTES);
    if (read.tooLarge) {
      // The rest is read and dropped, so the 413 reaches a client still sending.
      req.resume();
      return jsonError(
        res,
        413,
        -32000,
        `Payload Too Large: Request body must not exceed ${MAX_REQUEST_BODY_BYTES} bytes`,
      );
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(read.body.toString('utf8'));
    } catch {
      // Not JSON: the 2025 transport answers it as it always has (400, parse error).
      parsed = undefined;
    }
    const header = (name: string) => {
      const value = req.headers[name];
      return typeof value === 'string' ? value : undefined;
    };
    const route =
      parsed === undefined
        ? ({ kind: 'legacy' } as const)
        : classifyInboundRequest({
            httpMethod: 'POST',
            ...optional('protocolVersionHeader', header('mcp-protocol-version')),
            ...optional('mcpMethodHeader', header('mcp-method')),
            ...optional('mcpNameHeader', header('mcp-name')),
            body: parsed,
          });
    if (route.kind === 'reject') {
      const id = (parsed as { id?: unknown } | undefined)?.id;
      res.writeHead(route.httpStatus, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          jsonrpc: '2.0',
          id: typeof id === 'string' || typeof id === 'number' ? id : null,
          error: {
            code: route.code,
            message: route.message,
            ...(route.data !== undefined ? { data: route.data } : {}),
          },
        }),
      );
      return;
    }
    /** A 2026 tools/call's Mcp-Param-* against its body (the SDK checks them only for McpServer). */
    const paramMismatch = (message: unknown): string | undefined => {
      const { method, params } = message as {
        method?: unknown;
        params?: { name?: unknown; arguments?: unknown };
      };
      if (method !== 'tools/call' || typeof params?.name !== 'string') return undefined;
      const tool = gateway.listTools().find((listed) => listed.name === params.name);
      return tool ? paramHeaderMismatch(tool.inputSchema, params.arguments, req.headers) : undefined;
    };
    if (route.kind === 'modern') {
      if (!isJsonContentType(req.headers['content-type']))
        return jsonError(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
      // The SDK bounds open listen streams over all callers: one token may hold only its share, so
      // one agent cannot take every stream and leave the others without change notices.
      if ((parsed as { method?: unknown }).method === 'subscriptions/listen') {
        const key = tokenHash.toString('hex');
        const open = listens.get(key) ?? 0;
        if (open >= perToken)
          return refuse(
            res,
            429,
            `This token already has ${perToken} subscriptions/listen streams open; close one, or raise the cap with: ringfence mcp serve --max-sessions N`,
          );
        listens.set(key, open + 1);
        res.once('close', () => {
          const left = (listens.get(key) ?? 1) - 1;
          if (left > 0) listens.set(key, left);
          else listens.delete(key);
        });
      }
      const mismatch = paramMismatch(parsed);
      if (mismatch) {
        const id = (parsed as { id?: unknown }).id;
        res.writeHead(400, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: typeof id === 'string' || typeof id === 'number' ? id : null,
            error: {
              code: HEADER_MISMATCH,
              message: `Bad Request: the request headers and body disagree: ${mismatch}. Send the Mcp-Param-* headers the tool's inputSchema declares (x-mcp-header), with the values of the call's arguments.`,
            },
          }),
        );
        return;
      }
      return serveModern(modern.handler, req, res, { raw: read.body, parsed }, identity, tokenHash);
    }
    if (!makeRoom(tokenHash))
      return refuse(
        res,
        429,
        `This token already has ${perToken} sessions, all busy; end one (DELETE its session), or raise the cap with: ringfence mcp serve --max-sessions N`,
      );
    const transport: HttpSessionTransport = new HttpSessionTransport({
      newSessionId: () => randomUUID(),
      ...(options.sessions?.maxUnsentBytes ? { maxUnsentBytes: options.sessions.maxUnsentBytes } : {}),
      ...(options.sessions?.replayEvents ? { replayEvents: options.sessions.replayEvents } : {}),
      ...(options.sessions?.replayBytes ? { replayBytes: options.sessions.replayBytes } : {}),
      ...(options.sessions?.keepAliveMs ? { keepAliveMs: options.sessions.keepAliveMs } : {}),
      onsessioninitialized: (id) => {
        sessions.set(id, { transport, tokenHash, lastSeen: Date.now(), busy: 0, streams: 0 });
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    const mcp = createEndpointServer(gateway, identity);
    await mcp.connect(transport);
    await transport.handleRequest(req, res, read.body);
    // Not an initialisation after all: nothing may linger for a request that opened no session.
    if (!transport.sessionId) await mcp.close().catch(() => {});
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = server.address() as { port: number };
  hosts = allowedHosts(host, actual.port);
  const url = `http://${isIP(host) === 6 ? `[${host}]` : host}:${actual.port}/mcp`;
  return {
    server,
    url,
    sessionCount: () => sessions.size,
    pendingRequests: () => [...sessions.values()].reduce((n, s) => n + s.transport.pending(), 0),
    keptEvents: () =>
      [...sessions.values()].reduce(
        (sum, s) => {
          const kept = s.transport.kept();
          return { events: sum.events + kept.events, bytes: sum.bytes + kept.bytes };
        },
        { events: 0, bytes: 0 },
      ),
    close: async () => {
      clearInterval(sweeper);
      await modern.close().catch(() => {});
      await Promise.all([...sessions.values()].map((s) => s.transport.close().catch(() => {})));
      sessions.clear();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
