import type {
  JSONRPCMessage,
  MessageExtraInfo,
  Transport,
  TransportSendOptions,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import type { ServerConfig } from '../config/servers.js';
import { generateToken } from '../local-http/guard.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { Upstream } from '../ports/upstream.js';
import { rendered } from '../text/render.js';
import { newSessionId, startupMark } from '../util/startup.js';
import { createEndpointServer } from './endpoint.js';
import { Gateway } from './gateway.js';
import type { SessionLimits, TokenResolver } from './http.js';

export interface ServeOptions {
  readonly home: string;
  /**
   * The registrations to serve, as the caller read and selected them (`selectServers`): read
   * once, by whoever starts anything for them, so nothing started before the gateway can differ
   * from what it serves.
   */
  readonly servers: readonly ServerConfig[];
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly createUpstream: (config: ServerConfig) => Upstream;
  /** Report lines for people, each server word in them rendered once: see `GatewayOptions.log`. */
  readonly log: (line: string) => void;
  readonly session?: string;
  readonly policy?: PolicyView;
  /** Serve streamable HTTP on this HOST:PORT instead of stdio. */
  readonly http?: string;
  readonly insecureListen?: boolean;
  /** Idle expiry and per-token cap of --http sessions (`--session-idle`, `--max-sessions`). */
  readonly httpSessions?: SessionLimits;
  /** Token for --http (RINGFENCE_MCP_TOKEN); a random one is made and printed once when absent. */
  readonly httpToken?: string;
  /** Extra token → identity resolution (agent tokens). */
  readonly resolveAgentToken?: TokenResolver;
  /** Identity of the stdio caller (from RINGFENCE_AGENT_TOKEN). */
  readonly stdioIdentity?: { agent?: string; scope?: string };
  readonly stdin?: NodeJS.ReadableStream;
  readonly stdout?: NodeJS.WritableStream;
  readonly startTimeoutMs?: number;
  /**
   * Serve only this registered server, under its own tool and prompt names (`mcp serve --only`):
   * a client can keep one entry per server, each still contained, pinned, checked and audited.
   */
  readonly only?: string;
  /** ringfence's own server (`mcp serve --sandbox-tools`): its tools, served through the same pipeline. */
  readonly ownServer?: Upstream;
  /**
   * `mcp serve --metrics [HOST:]PORT`: the metrics the audit log and the runtime already report
   * to, served on this address (docs/operations.md, "Metrics"); the pipeline reports to them too.
   */
  readonly metrics?: { readonly address: string; readonly registry: GatewayMetrics };
}

export interface RunningGateway {
  readonly gateway: Gateway;
  readonly url?: string;
  /** Resolves when the client goes away (stdin ends / HTTP server closes). */
  readonly done: Promise<void>;
  close(): Promise<void>;
}

export { newSessionId };

/**
 * What `mcp serve` says when it has nothing to serve: a client started with a minimal environment
 * (no RINGFENCE_HOME) would otherwise get an empty tool list and no hint why.
 */
export function emptyGatewayNotice(home: string): string {
  return `ringfence: no servers are registered in ${home}, so there are no tools. Add one with: ringfence mcp add NAME --url URL (or --image / --npm); if your servers are registered in another home, start ringfence with RINGFENCE_HOME set to it (ringfence client setup writes that into the client's entry).`;
}

/** `ringfence mcp serve`: load the registered servers, start them, serve the catalog. */
export async function runGateway(options: ServeOptions): Promise<RunningGateway> {
  const servers = options.servers;
  const notice = servers.length === 0 && !options.ownServer ? emptyGatewayNotice(options.home) : undefined;
  const session = options.session ?? newSessionId();
  const gateway = new Gateway({
    servers,
    pins: new PinStore(options.home),
    guard: options.guard,
    audit: options.audit,
    createUpstream: options.createUpstream,
    log: options.log,
    session,
    ...(options.policy ? { policy: options.policy } : {}),
    ...(options.startTimeoutMs ? { startTimeoutMs: options.startTimeoutMs } : {}),
    ...(options.only !== undefined ? { naming: { prefixed: false } } : {}),
    ...(options.ownServer ? { ownServer: options.ownServer } : {}),
    ...(notice ? { notice } : {}),
    ...(options.metrics ? { observer: options.metrics.registry } : {}),
  });
  // What `GET /healthz` answers: from the end of the start to the beginning of the close.
  let serving = false;
  let token = options.httpToken;
  /** The gateway's bearer token: RINGFENCE_MCP_TOKEN, or one made and shown once when first needed. */
  const gatewayToken = (): string => {
    if (token === undefined) {
      token = generateToken();
      options.log(`ringfence: bearer token for this session (shown once): ${token}`);
    }
    return token;
  };
  let sessions: () => Iterable<{ transport: string; count: number }> = () => [];
  // Before the servers start: a taken port is refused at once, and /healthz says 503 until they have.
  const metrics = options.metrics
    ? await startMetrics(gateway, options.metrics, {
        ...(options.insecureListen ? { insecureListen: true } : {}),
        log: options.log,
        token: gatewayToken,
        serving: () => serving,
        sessions: () => sessions(),
      })
    : undefined;

  // The notice names the home folder, rendered here like any other text the gateway did not write.
  if (notice) options.log(rendered(notice, 'line'));
  try {
    await gateway.start();
  } catch (error) {
    await metrics?.close();
    throw error;
  }
  serving = true;
  const exposed = gateway.listTools().length;
  const prompts = gateway.listPrompts().length;
  const resources = gateway.resources.listResources().length + gateway.resources.listTemplates().length;
  const withheld = gateway.withheld().filter((w) => w.kind !== 'filtered').length;
  options.log(
    `ringfence: serving ${exposed} tool(s)${prompts > 0 ? ` and ${prompts} prompt(s)` : ''}${resources > 0 ? `, ${resources} resource(s) and template(s)` : ''} from ${options.only !== undefined ? `${options.only} only, under its own names` : `${servers.length} server(s)`}, ${withheld} withheld; session ${session}`,
  );

  if (options.http) {
    // Only --http needs the HTTP server, its transport and hono: a stdio start does not load them.
    const { serveHttp, tokensEqual } = await import('./http.js');
    const expected = gatewayToken();
    const resolveToken: TokenResolver = async (presented) =>
      tokensEqual(presented, expected) ? {} : await options.resolveAgentToken?.(presented);
    const http = await serveHttp(gateway, {
      address: options.http,
      ...(options.insecureListen ? { insecureListen: true } : {}),
      ...(options.httpSessions ? { sessions: options.httpSessions } : {}),
      resolveToken,
      serving: () => serving,
    }).catch(async (error: unknown) => {
      await metrics?.close();
      throw error;
    });
    sessions = () => [{ transport: 'http', count: http.sessionCount() }];
    options.log(`ringfence: listening on ${http.url}`);
    let finish: () => void = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    return {
      gateway,
      url: http.url,
      done,
      close: async () => {
        serving = false;
        await metrics?.close();
        await http.close();
        await gateway.close();
        finish();
      },
    };
  }

  let ended: () => void = () => {};
  let connected = true;
  const done = new Promise<void>((resolve) => {
    ended = resolve;
    (options.stdin ?? process.stdin).once('end', () => resolve());
  }).finally(() => {
    connected = false;
  });
  sessions = () => [{ transport: 'stdio', count: connected ? 1 : 0 }];
  // One connection, either era: a 2025 client's `initialize` pins a 2025 instance, a 2026 client's
  // first request a 2026 one (a `server/discover` probe's instance is closed, and its listeners
  // with it, when the client then falls back to `initialize`).
  const identity = options.stdioIdentity ?? {};
  const served = serveStdio(({ era }) => createEndpointServer(gateway, identity, { era }), {
    transport: new ObservedTransport(
      new StdioServerTransport(
        (options.stdin ?? process.stdin) as never,
        (options.stdout ?? process.stdout) as never,
      ),
      () => ended(),
    ),
  });
  startupMark('serve: stdio endpoint connected');
  return {
    gateway,
    done,
    close: async () => {
      serving = false;
      await metrics?.close();
      await served.close().catch(() => {});
      await gateway.close();
    },
  };
}

/**
 * The metrics endpoint (`--metrics`), its gauges read from the gateway at each scrape: sessions,
 * and the definitions withheld now. Loaded only when asked for.
 */
async function startMetrics(
  gateway: Gateway,
  { registry, address }: NonNullable<ServeOptions['metrics']>,
  hooks: {
    insecureListen?: boolean;
    log: (line: string) => void;
    token: () => string;
    serving: () => boolean;
    sessions: () => Iterable<{ transport: string; count: number }>;
  },
) {
  registry.readFrom({
    sessions: hooks.sessions,
    withheld: () =>
      gateway
        .withheld()
        .filter((entry) => entry.kind !== 'filtered')
        .map((entry) => ({ server: entry.server, definition: entry.definition, reason: entry.kind })),
  });
  const { serveMetrics } = await import('../metrics/server.js');
  const listener = await serveMetrics({
    address,
    ...(hooks.insecureListen ? { insecureListen: true } : {}),
    token: hooks.token,
    render: () => registry.render(),
    serving: hooks.serving,
  });
  // A scrape needs the token: make (and show) it now rather than at the first scrape.
  if (listener.tokenRequired) hooks.token();
  hooks.log(
    `ringfence: metrics at ${listener.url}${listener.tokenRequired ? ' (bearer token required)' : ''}`,
  );
  return listener;
}

/**
 * A transport that reports its own close: `serveStdio` owns the transport and its handlers, and
 * the gateway must still learn that the client went away (stdin ended, or stdout broke).
 */
class ObservedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  constructor(
    private readonly inner: Transport,
    onEnd: () => void,
  ) {
    inner.onclose = () => {
      onEnd();
      this.onclose?.();
    };
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.onmessage?.(message, extra);
  }
  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
}
