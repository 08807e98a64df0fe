/**
 * `ringfence console`: a read-only page over the files of a home. It has `mcp serve --http`'s
 * protections (local-http/guard.ts: loopback only, a token, Host and Origin checks), takes the
 * token once from the address and gives back a session bound to the console's own page
 * (session.ts: a cookie and a page address, each useless without the other), answers only GET
 * and HEAD, and sends a Content-Security-Policy that allows no inline script or style and no
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
import { ConsoleSessions, consoleCookieName } from './session.js';

export { consoleCookieName };

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

/**
 * The page and its two bundled files (built by scripts/build-console.mjs), by their path under
 * the session's page address; nothing else is served.
 */
const ASSETS: Record<string, { file: string; type: string }> = {
  '': { file: 'index.html', type: 'text/html; charset=utf-8' },
  'console.js': { file: 'console.js', type: 'text/javascript; charset=utf-8' },
  'console.css': { file: 'console.css', type: 'text/css; charset=utf-8' },
};

const OPEN_PRINTED =
  'Open the address "ringfence console" printed when it started (it carries the token); restart it for a new one.';

/**
 * What the browser says about where a request comes from (Fetch Metadata). The console's page
 * fetches its own origin (`same-origin`) and is opened by the person (`none`); a page on
 * another port of 127.0.0.1 is `same-site` (ports do not make sites), which is refused even
 * with the right cookie.
 */
const SITES_ALLOWED = new Set(['same-origin', 'none']);

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

export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { host, port } = parseListenAddress(options.address);
  assertLoopbackListen(host, options.insecureListen);
  const token = options.token ?? generateToken();
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

  let sessions: ConsoleSessions | undefined;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const actualPort = (server.address() as { port: number }).port;
    sessions ??= new ConsoleSessions(actualPort);
    const refused = checkHostAndOrigin(req, allowedHosts(host, actualPort), 'console');
    if (refused) return plain(res, refused.status, refused.message);
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string' && !SITES_ALLOWED.has(site))
      return plain(
        res,
        403,
        `The browser says this request comes from another site or port (Sec-Fetch-Site: ${site.slice(0, 40)}); the console answers only its own page. ${OPEN_PRINTED}`,
      );
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
      // The token leaves the address bar at once; the browser keeps a cookie and the page's
      // address, which unlock the console only together (session.ts).
      const minted = sessions.mint();
      res.writeHead(303, {
        ...SECURITY_HEADERS,
        location: minted.pagePath,
        'set-cookie': sessions.setCookie(minted),
      });
      res.end();
      return;
    }
    const admitted = sessions.admit(req, url.pathname);
    if (!admitted) return plain(res, 401, OPEN_PRINTED);
    // The page's relative URLs resolve under its address only with the trailing slash.
    if (!admitted.slash) {
      res.writeHead(308, { ...SECURITY_HEADERS, location: `${url.pathname}/` });
      res.end();
      return;
    }
    const asset = ASSETS[admitted.rest];
    if (asset) {
      const body = await readFile(join(assetsDir, asset.file)).catch(() => undefined);
      if (!body)
        return plain(res, 500, `The console's page is missing from ${assetsDir}. Rebuild: npm run build`);
      res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': asset.type });
      res.end(req.method === 'HEAD' ? undefined : body);
      return;
    }
    switch (admitted.rest) {
      case 'api/overview':
        return json(res, await readOverview(options.home, feed.run));
      case 'api/entries': {
        const after = Number(url.searchParams.get('after') ?? '0');
        return json(res, feed.since(Number.isSafeInteger(after) ? after : 0));
      }
      case 'api/chain':
        return json(res, await feed.chain());
      case 'api/events':
        return events(res);
      default:
        return plain(
          res,
          404,
          `Nothing at ${admitted.rest}. The console's page is at the address it opened.`,
        );
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
