/**
 * `mcp serve --metrics [HOST:]PORT`: the Prometheus endpoint, a listener of its own (not the
 * `--http` one, whose tokens are the AI clients' and agents': a scrape shows every server's and
 * tool's name, across agents). Loopback by default and then without a token, as a local scraper
 * expects; any other address only with `--insecure-listen`, and then every scrape needs the
 * gateway's bearer token. The Host and Origin rules are `--http`'s (DNS rebinding).
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import {
  allowedHosts,
  assertLoopbackListen,
  checkHostAndOrigin,
  isLoopbackAddress,
  ListenError,
  parseListenAddress,
  tokensEqual,
} from '../local-http/guard.js';
import { answerHealthProbe } from '../local-http/health.js';

export const METRICS_PATH = '/metrics';
export const EXPOSITION_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** `PORT` alone means 127.0.0.1:PORT; `HOST:PORT` as given. */
export function metricsAddress(flag: string): string {
  return /^\d{1,5}$/.test(flag.trim()) ? `127.0.0.1:${flag.trim()}` : flag;
}

export interface MetricsListener {
  readonly url: string;
  /** Whether a scrape needs the bearer token (a non-loopback address). */
  readonly tokenRequired: boolean;
  close(): Promise<void>;
}

function answer(
  res: ServerResponse,
  status: number,
  body: string,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, {
    'content-type': status === 200 ? EXPOSITION_CONTENT_TYPE : 'text/plain; charset=utf-8',
    'content-length': String(Buffer.byteLength(body)),
    'cache-control': 'no-store',
    ...headers,
  });
  res.end(body);
}

export async function serveMetrics(options: {
  address: string;
  insecureListen?: boolean;
  /** Required of every scrape when the address is not loopback. */
  token: () => string;
  render: () => string;
  /** For `GET /healthz`, answered here as on `--http`. */
  serving: () => boolean;
}): Promise<MetricsListener> {
  const { host, port } = parseListenAddress(metricsAddress(options.address));
  assertLoopbackListen(host, options.insecureListen);
  // Every scrape needs the gateway's token, on loopback too: a loopback port is open to every
  // account on the machine, and the names and counts it shows are the home's (kept 0700).
  const tokenRequired = true;
  let hosts: ReadonlySet<string> = new Set();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (answerHealthProbe(req, res, options.serving)) return;
    const refused = checkHostAndOrigin(req, hosts, 'metrics endpoint');
    if (refused) return answer(res, refused.status, `${refused.message}\n`);
    if (tokenRequired) {
      const match = /^Bearer ([A-Za-z0-9._~+/=-]+)$/.exec(req.headers.authorization ?? '');
      if (!match || !tokensEqual(match[1]!, options.token()))
        return answer(
          res,
          401,
          "A valid bearer token is required (Authorization: Bearer TOKEN): the gateway's token (RINGFENCE_MCP_TOKEN), as Prometheus' scrape config sends with authorization.credentials_file.\n",
          { 'www-authenticate': 'Bearer' },
        );
    }
    if (req.url !== METRICS_PATH)
      return answer(
        res,
        404,
        `Nothing here: the metrics are at ${METRICS_PATH}, the health probe at /healthz.\n`,
      );
    if (req.method !== 'GET' && req.method !== 'HEAD')
      return answer(res, 405, `${METRICS_PATH} is read with GET.\n`, { allow: 'GET, HEAD' });
    const body = options.render();
    if (req.method === 'HEAD') {
      res.writeHead(200, { 'content-type': EXPOSITION_CONTENT_TYPE, 'cache-control': 'no-store' }).end();
      return;
    }
    answer(res, 200, body);
  };
  const server = createServer((req, res) => {
    try {
      handle(req, res);
    } catch (error) {
      if (!res.headersSent) answer(res, 500, `internal error: ${(error as Error).message}\n`);
      else res.end();
    }
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new ListenError(
          'LISTEN_ADDRESS',
          `The metrics endpoint cannot listen on ${host}:${port} (${error.code ?? error.message}); give --metrics another port.`,
          { cause: error },
        ),
      ),
    );
    server.listen(port, host, () => resolve());
  });
  const actual = server.address() as { port: number };
  hosts = allowedHosts(host, actual.port);
  return {
    url: `http://${isIP(host) === 6 ? `[${host}]` : host}:${actual.port}${METRICS_PATH}`,
    tokenRequired,
    close: async () => {
      // A scraper keeps its connection open between scrapes: closed with the listener.
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      await closed;
    },
  };
}
