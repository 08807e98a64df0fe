import { type PriorDiscovery, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { answerCapBytes, type CallLimits, callLimitsOf } from '../config/limits.js';
import type { HttpServerConfig } from '../config/servers.js';
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
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { redactText, redactUrl } from '../text/redact.js';
import { withTimeout } from '../util/timeout.js';
import { connectInEra, type EraMemory } from './era.js';
import { HttpStatusError } from './http-endpoint.js';
import { HttpClientTransport } from './http-transport.js';
import { grantsOf, UpstreamClient } from './mcp-client.js';

/** A remote MCP server over streamable HTTP (`HttpClientTransport`). */
export class RemoteUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  readonly limits: CallLimits;
  private connection: { client: UpstreamClient; transport: HttpClientTransport } | undefined;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private serverRequestHandler: ServerRequestHandler | undefined;
  private resourceListener: ((uri: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;
  private closing = false;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
    /** Where its era verdict is kept (absent: probed at each start). */
    private readonly eras?: EraMemory,
    /** `@secret:` header values → the stored values, at each connection (in memory only). */
    private readonly resolveSecrets?: (config: HttpServerConfig) => Promise<HttpServerConfig>,
  ) {
    this.name = config.name;
    this.destination = `remote ${new URL(config.url).host}`;
    this.limits = callLimitsOf(config);
  }

  async start(): Promise<void> {
    let connection: { client: UpstreamClient; transport: HttpClientTransport } | undefined;
    await connectInEra(this.config, this.eras, async (prior) => {
      connection = await this.connect(prior);
      return connection.client;
    });
    this.connection = connection;
  }

  private async connect(prior = this.prior()) {
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
    });
    client.onListChanged(() => this.changeListener?.());
    client.onLog((params) => this.logListener?.(params));
    client.onServerRequest((request) => this.refuseWithoutHandler(request));
    client.onResourceUpdated((uri) => this.resourceListener?.(uri));
    transport.onclose = () => {
      if (!this.closing && this.connection?.transport === transport)
        this.closedListener?.('the connection closed');
    };
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

  setLoggingLevel(level: string): Promise<void> {
    return this.withSessionRetry((client) => client.setLoggingLevel(level));
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
    if (!connection) return;
    // Best effort and bounded: tell the server the session is over, then drop the connection.
    await withTimeout(
      connection.transport.terminateSession(),
      this.timeouts.closeMs,
      () => new GatewayError('TIMED_OUT', 'ending the session timed out'),
    ).catch(() => {});
    await connection.client.close().catch(() => {});
  }
}
