/**
 * `ringfence console`: a read-only page over the files of a home. It has `mcp serve --http`'s
 * protections (local-http/guard.ts: loopback only, a token, Host and Origin checks), takes the
 * token once from the address and gives back an HttpOnly, SameSite=Strict cookie, answers only
 * GET and HEAD, and sends a Content-Security-Policy that allows no inline script or style and no
 * other origin. It has no endpoint that writes: approving stays at the terminal.
 */
import { readFile, stat } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUDIT_FILE_NAME } from '../audit/types.js';
import {
  allowedHosts,
  assertLoopbackListen,
  checkHostAndOrigin,
  generateToken,
  parseListenAddress,
  tokensEqual,
} from '../local-http/guard.js';
import { AuditFeed } from './audit-feed.js';
import { readOverview } from './overview.js';

export const CONSOLE_COOKIE = 'ringfence_console';

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONSOLE_CSP,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cache-control': 'no-store',
} as const;

/** The page and its two bundled files (built by scripts/build-console.mjs); nothing else is served. */
const ASSETS: Record<string, { file: string; type: string }> = {
  '/': { file: 'index.html', type: 'text/html; charset=utf-8' },
  '/console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  '/console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
};

/** At most this many pages may listen for live updates at once. */
const MAX_EVENT_STREAMS = 16;

export interface ConsoleOptions {
  readonly home: string;
  /** `HOST:PORT`; loopback only unless `insecureListen`. */
  readonly address: string;
  readonly insecureListen?: boolean;
  /** Fixed token (tests, `RINGFENCE_CONSOLE_TOKEN`); a random one otherwise. */
  readonly token?: string;
  /** Where the bundled page is; default: beside this module in dist/. */
  readonly assetsDir?: string;
  /** Files whose change makes the page reload its overview (the policy's installed files). */
  readonly watchFiles?: readonly string[];
}

export interface RunningConsole {
  /** The address to open once: it carries the token. */
  readonly url: string;
  readonly origin: string;
  readonly server: Server;
  close(): Promise<void>;
}

function plain(
  res: ServerResponse,
  status: number,
  message: string,
  extra: Record<string, string> = {},
): void {
  res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': 'text/plain; charset=utf-8', ...extra });
  res.end(`${message}\n`);
}

function json(res: ServerResponse, value: unknown): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(value));
}

function cookieOf(req: IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...value] = part.trim().split('=');
    if (key === CONSOLE_COOKIE) return value.join('=');
  }
  return undefined;
}

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { host, port } = parseListenAddress(options.address);
  assertLoopbackListen(host, options.insecureListen);
  const token = options.token ?? generateToken();
  // What the browser holds is not the token: the address it came in can leak (history), the cookie cannot be read by scripts.
  const cookieSecret = generateToken();
  const assetsDir = options.assetsDir ?? fileURLToPath(new URL('../console-web/', import.meta.url));
  const feed = new AuditFeed(join(options.home, AUDIT_FILE_NAME));
  await feed.open();
  const streams = new Set<ServerResponse>();
  const watched = [
    join(options.home, 'mcp-servers.json'),
    join(options.home, 'mcp-pins.json'),
    ...(options.watchFiles ?? []),
  ];

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      if (!res.headersSent) plain(res, 500, `The console could not answer: ${(error as Error).message}`);
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const actualPort = (server.address() as { port: number }).port;
    const refused = checkHostAndOrigin(req, allowedHosts(host, actualPort), 'console');
    if (refused) return plain(res, refused.status, refused.message);
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return plain(
        res,
        405,
        'The console is read-only: it answers GET only. Approve and change things at the terminal.',
        {
          allow: 'GET, HEAD',
        },
      );
    const url = new URL(req.url ?? '/', 'http://console.invalid');
    const presented = url.searchParams.get('token');
    if (url.pathname === '/' && presented !== null) {
      if (!tokensEqual(presented, token))
        return plain(
          res,
          401,
          'This token is not the console\'s. Open the address "ringfence console" printed when it started.',
        );
      // The token leaves the address bar at once; the browser keeps only the cookie.
      res.writeHead(303, {
        ...SECURITY_HEADERS,
        location: '/',
        'set-cookie': `${CONSOLE_COOKIE}=${cookieSecret}; HttpOnly; SameSite=Strict; Path=/`,
      });
      res.end();
      return;
    }
    const cookie = cookieOf(req);
    if (cookie === undefined || !tokensEqual(cookie, cookieSecret))
      return plain(
        res,
        401,
        'Open the address "ringfence console" printed when it started (it carries the token); restart it for a new one.',
      );
    const asset = ASSETS[url.pathname];
    if (asset) {
      const body = await readFile(join(assetsDir, asset.file)).catch(() => undefined);
      if (!body)
        return plain(res, 500, `The console's page is missing from ${assetsDir}. Rebuild: npm run build`);
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    switch (url.pathname) {
      case '/api/overview':
        return json(res, await readOverview(options.home, feed.run));
      case '/api/entries': {
        const after = Number(url.searchParams.get('after') ?? '0');
        return json(res, feed.since(Number.isSafeInteger(after) ? after : 0));
      }
      case '/api/chain':
        return json(res, await feed.chain());
      case '/api/events':
        return events(res);
      default:
        return plain(res, 404, `Nothing at ${url.pathname}. The console's page is at /.`);
    }
  }

  function events(res: ServerResponse): void {
    if (streams.size >= MAX_EVENT_STREAMS) {
      plain(res, 503, 'Too many console pages are open; close one and reload.');
      return;
    }
    res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': 'text/event-stream' });
    res.write(': live\n\n');
    streams.add(res);
    const stop = feed.onAppend(() => res.write('event: audit\ndata: {}\n\n'));
    res.once('close', () => {
      stop();
      streams.delete(res);
    });
  }

  // The overview comes from files no gateway announces changes of: they are watched by their stat.
  let lastStats = '';
  const statsOf = async () =>
    (
      await Promise.all(
        watched.map(async (file) => {
          const info = await stat(file).catch(() => undefined);
          return info ? `${info.ino}:${info.size}:${info.mtimeMs}` : '-';
        }),
      )
    ).join('|');
  lastStats = await statsOf();
  const watcher = setInterval(() => {
    void statsOf().then((now) => {
      if (now === lastStats) return;
      lastStats = now;
      for (const res of streams) res.write('event: files\ndata: {}\n\n');
    });
  }, 1_000);
  const keepAlive = setInterval(() => {
    for (const res of streams) res.write(': keep-alive\n\n');
  }, 15_000);

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actual = server.address() as { port: number };
  const origin = `http://${isIP(host) === 6 ? `[${host}]` : host}:${actual.port}`;
  return {
    url: `${origin}/?token=${token}`,
    origin,
    server,
    close: async () => {
      clearInterval(watcher);
      clearInterval(keepAlive);
      for (const res of streams) res.end();
      await feed.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
    },
  };
}
