import { type PriorDiscovery, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { answerCapBytes, type CallLimits, callLimitsOf } from '../config/limits.js';
import type { HttpServerConfig } from '../config/servers.js';
import type { Reach } from '../credentials/scan/reach.js';
import { GatewayError } from '../errors.js';
import { UpstreamError } from '../ports/errors.js';
import {
  type CallOptions,
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ResourceListing,
  type ResourceTemplateListing,
  type ServerRequest,
  type ServerRequestHandler,
  type ToolListing,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamEra,
  type UpstreamRequests,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { redactText, redactUrl } from '../text/redact.js';
import { withTimeout } from '../util/timeout.js';
import { connectInEra, type EraMemory } from './era.js';
import { HttpStatusError } from './http-endpoint.js';
import { HttpClientTransport, type RequestAuthorizer } from './http-transport.js';
import { LegacyCompanion, legacyCallerSide } from './legacy-companion.js';
import { grantsOf, UpstreamClient } from './mcp-client.js';

/** A login-needed or token refusal of the holder's, wherever the SDK wrapped it (the era probe does). */
function authErrorIn(error: unknown): UpstreamError | undefined {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++)
    if (at instanceof UpstreamError && (at.code === 'LOGIN_NEEDED' || at.code === 'AUTH_REFUSED')) return at;
  return undefined;
}

/** A remote MCP server over streamable HTTP (`HttpClientTransport`). */
export class RemoteUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  readonly reach: Reach;
  readonly limits: CallLimits;
  private connection: { client: UpstreamClient; transport: HttpClientTransport } | undefined;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private serverRequestHandler: ServerRequestHandler | undefined;
  private resourceListener: ((uri: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;
  private closing = false;
  /** The 2025 session 2025 callers are served over while the primary speaks 2026-07-28. */
  private readonly companion: LegacyCompanion;
  private readonly legacySide: UpstreamRequests;
  private logLevel: string | undefined;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
    /** Where its era verdict is kept (absent: probed at each start). */
    private readonly eras?: EraMemory,
    /** An OAuth registration's token holder (remote-auth/): each request's Authorization. */
    private readonly authorizer?: RequestAuthorizer,
    /** `@secret:` header values → the stored values, at each connection (in memory only). */
    private readonly resolveSecrets?: (config: HttpServerConfig) => Promise<HttpServerConfig>,
  ) {
    this.name = config.name;
    this.destination = `remote ${new URL(config.url).host}`;
    this.reach = { kind: 'remote', host: new URL(config.url).host };
    this.limits = callLimitsOf(config);
    this.companion = new LegacyCompanion({
      name: this.name,
      primary: this,
      verdict: () => this.connection?.client.verdict(),
      open: () => this.connect({ kind: 'legacy' }, true),
      logLevel: () => this.logLevel,
      learnt: (how) => void this.eras?.noteLegacyClients?.(config, how).catch(() => {}),
    });
    this.legacySide = legacyCallerSide(this, this.companion);
  }

  /**
   * A 2025 caller of a server whose primary connection speaks 2026-07-28 is served over the
   * companion 2025 session (`legacy-companion.ts`); everyone else over the primary.
   */
  forCaller(era: UpstreamEra): UpstreamRequests {
    return era === 'legacy' && this.connection?.client.era() === 'modern' ? this.legacySide : this;
  }

  async start(): Promise<void> {
    let connection: { client: UpstreamClient; transport: HttpClientTransport } | undefined;
    await connectInEra(this.config, this.eras, async (prior) => {
      connection = await this.connect(prior);
      return connection.client;
    });
    this.connection = connection;
  }

  /** `companion`: a 2025 session beside the primary; its closing is not the server's loss. */
  private async connect(prior = this.prior(), companion = false) {
    // A remote server has no mounts: its roots are an empty list.
    const client = new UpstreamClient(this.name, this.timeouts, this.limits, {
      grants: grantsOf(this.config),
      roots: () => [],
    });
    const headers = (this.resolveSecrets ? await this.resolveSecrets(this.config) : this.config).headers;
    const transport = new HttpClientTransport(new URL(this.config.url), {
      server: this.config.name,
      ...(headers ? { headers } : {}),
      maxAnswerBytes: answerCapBytes(this.limits.maxResultBytes),
      onCallBroken: (token, error) => client.failCall(token, error),
      ...(this.authorizer ? { authorizer: this.authorizer } : {}),
    });
    // A server request on a call's own answer stream is that call's (serve/server-requests.ts).
    client.attributeBy((id) => transport.callOf(id));
    // The companion is the same server: its log lines and requests go where the primary's go.
    // Its list changes and resource updates are not listened to: those are the primary's.
    client.onLog((params) => this.logListener?.(params));
    client.onServerRequest((request) => this.refuseWithoutHandler(request));
    if (!companion) {
      client.onListChanged(() => this.changeListener?.());
      client.onResourceUpdated((uri) => this.resourceListener?.(uri));
      transport.onclose = () => {
        if (!this.closing && this.connection?.transport === transport)
          this.closedListener?.('the connection closed');
      };
    }
    try {
      await withTimeout(
        client.connect(transport, prior),
        this.timeouts.connectMs,
        () =>
          new UpstreamError(
            'UPSTREAM_CONNECT',
            `connecting to ${redactUrl(this.config.url)} timed out after ${this.timeouts.connectMs} ms`,
          ),
      );
    } catch (error) {
      await transport.close().catch(() => {});
      // A login is needed, or the held token may not be used: said as it is (our words, no token).
      const auth = authErrorIn(error);
      if (auth) throw auth;
      throw new UpstreamError(
        'UPSTREAM_CONNECT',
        // The URL may carry a token in its query, and the cause may quote it: both redacted.
        redactText(`cannot connect to ${redactUrl(this.config.url)}: ${(error as Error).message}`),
        { cause: error },
      );
    }
    return { client, transport };
  }

  private get live() {
    if (!this.connection) throw new UpstreamError('SERVER_NOT_STARTED', `${this.name} is not started`);
    return this.connection;
  }

  /**
   * Run `operation`; if the server answers 404 to a request that carried a session id, the
   * session has expired on its side: forget it, initialise again and retry once.
   */
  private async withSessionRetry<T>(operation: (client: UpstreamClient) => Promise<T>): Promise<T> {
    const { client, transport } = this.live;
    try {
      return await operation(client);
    } catch (error) {
      if (!(error instanceof HttpStatusError) || error.status !== 404 || !transport.sessionId) throw error;
      // Calls that fail together share one new session instead of each opening (and leaking) one.
      this.reconnecting ??= (async () => {
        const old = this.connection;
        const fresh = await this.connect();
        if (this.closing) {
          await fresh.client.close().catch(() => {});
          throw new UpstreamError('UPSTREAM_CLOSING', `${this.name} is closing`);
        }
        this.connection = fresh;
        await old?.client.close().catch(() => {});
      })().finally(() => {
        this.reconnecting = undefined;
      });
      if (this.live.transport === transport) await this.reconnecting;
      return operation(this.live.client);
    }
  }

  private reconnecting: Promise<void> | undefined;

  /** A new session (after the old one expired) is in the era the server was found to speak. */
  private prior(): PriorDiscovery | undefined {
    return this.connection?.client.verdict();
  }

  capabilities(): UpstreamCapabilities {
    return this.live.client.capabilities();
  }

  instructions(): string | undefined {
    return this.live.client.instructions();
  }

  roots(): { roots: { uri: string; name: string }[] } {
    return this.live.client.roots();
  }

  era(): UpstreamEra {
    return this.live.client.era();
  }

  listTools(): Promise<ToolListing> {
    return this.withSessionRetry((client) => client.listTools());
  }

  listPrompts(): Promise<PromptListing> {
    return this.withSessionRetry((client) => client.listPrompts());
  }

  getPrompt(name: string, args: Record<string, string>, options: CallOptions = {}): Promise<unknown> {
    return this.withSessionRetry((client) => client.getPrompt(name, args, options));
  }

  complete(params: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return this.withSessionRetry((client) => client.complete(params, options.signal));
  }

  async setLoggingLevel(level: string): Promise<void> {
    this.logLevel = level;
    await this.withSessionRetry((client) => client.setLoggingLevel(level));
    await this.companion.setLoggingLevel(level).catch(() => {});
  }

  callTool(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    return this.withSessionRetry((client) => client.callTool(name, args, options));
  }

  onListChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  listResources(): Promise<ResourceListing> {
    return this.withSessionRetry((client) => client.listResources());
  }

  listResourceTemplates(): Promise<ResourceTemplateListing> {
    return this.withSessionRetry((client) => client.listResourceTemplates());
  }

  readResource(uri: string, options: CallOptions = {}): Promise<unknown> {
    return this.withSessionRetry((client) => client.readResource(uri, options));
  }

  subscribeResource(uri: string, subscribe: boolean): Promise<void> {
    return this.withSessionRetry((client) => client.subscribeResource(uri, subscribe));
  }

  onResourceUpdated(listener: (uri: unknown) => void): void {
    this.resourceListener = listener;
  }

  onLog(listener: (params: unknown) => void): void {
    this.logListener = listener;
  }

  onServerRequest(handler: ServerRequestHandler): void {
    this.serverRequestHandler = handler;
  }

  private refuseWithoutHandler(request: ServerRequest): Promise<Record<string, unknown>> {
    if (!this.serverRequestHandler)
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `ringfence does not answer ${request.method}`,
      );
    return this.serverRequestHandler(request);
  }

  onClosed(listener: (reason: string) => void): void {
    this.closedListener = listener;
  }

  async close(): Promise<void> {
    this.closing = true;
    const connection = this.connection;
    this.connection = undefined;
    await Promise.all([
      this.companion.close((companion) => this.end(companion)),
      connection ? this.end(connection) : undefined,
    ]);
  }

  /** Best effort and bounded: tell the server the session is over, then drop the connection. */
  private async end(connection: { client: UpstreamClient; transport: HttpClientTransport }): Promise<void> {
    await withTimeout(
      connection.transport.terminateSession(),
      this.timeouts.closeMs,
      () => new GatewayError('TIMED_OUT', 'ending the session timed out'),
    ).catch(() => {});
    await connection.client.close().catch(() => {});
  }
}
