import { type PriorDiscovery, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import { answerCapBytes, type CallLimits, callLimitsOf } from '../config/limits.js';
import type { ContainerServerConfig } from '../config/servers.js';
import { type Reach, reachOf } from '../credentials/scan/reach.js';
import { GatewayError } from '../errors.js';
import { UpstreamError } from '../ports/errors.js';
import {
  type CallOptions,
  type ContainedServer,
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ResourceListing,
  type ResourceTemplateListing,
  type ServerRequestHandler,
  type ToolListing,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamEra,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { withTimeout } from '../util/timeout.js';
import { connectInEra, type EraMemory } from './era.js';
import { grantsOf, UpstreamClient } from './mcp-client.js';
import { StreamTransport } from './stream-transport.js';

/**
 * How long a call that lost its container's stdio waits for the engine to report the exit, so it
 * can say why. Docker reports it about when the stream closes; Podman closes the attach stream
 * first and answers `wait` after it has reaped the process, seen well over 500 ms later on a
 * loaded machine. Waited only when a server's stdio is lost.
 */
const EXIT_REPORT_WAIT_MS = 3000;

/** A third-party MCP server in its own hardened container, spoken to over its attached stdio. */
export class ContainerUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  readonly reach: Reach;
  readonly limits: CallLimits;
  private client: UpstreamClient | undefined;
  private closing = false;
  private starting = false;
  private exitReported: (reason: string) => void = () => {};
  /** Settles when the engine reports the container's exit, with its reason. */
  private exited = new Promise<string>((resolve) => {
    this.exitReported = resolve;
  });
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private serverRequestHandler: ServerRequestHandler | undefined;
  private resourceListener: ((uri: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;
  /** Why the connection to the container broke (its attached stdio failed), once it has. */
  private broken: string | undefined;

  constructor(
    private readonly config: ContainerServerConfig,
    private server: ContainedServer,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
    /** Where its era verdict is kept (absent: probed at each start). */
    private readonly eras?: EraMemory,
    /**
     * A fresh container set for the same registration: a server that exits on the era probe has
     * spent its process, so it is started once more and spoken to in 2025 from the first line.
     */
    private readonly relaunch?: () => ContainedServer,
  ) {
    this.name = config.name;
    this.destination = `sandbox mcp-${config.name}`;
    this.reach = reachOf(config.egress);
    this.limits = callLimitsOf(config);
    this.watch(server);
  }

  private watch(server: ContainedServer): void {
    server.onExit((reason) => {
      // A container given up after the era probe is no loss: its successor serves.
      if (server !== this.server) return;
      this.exitReported(reason);
      // While starting, an exit is start()'s to report (it rejects, or starts a fresh container
      // when the server left on the era probe), not a loss of a running server.
      if (this.closing || this.starting) return;
      // Its stdout may outlive it for a moment (the attach stream): the calls end now, with why.
      this.client?.failAll(
        new UpstreamError('UPSTREAM_LOST', `the server stopped before it answered: ${reason}`),
      );
      this.closedListener?.(reason);
    });
  }

  async start(): Promise<void> {
    let first = true;
    this.starting = true;
    try {
      this.client = await connectInEra(this.config, this.eras, async (prior) => {
        if (!first) await this.replaceContainer();
        first = false;
        return this.connectOnce(prior);
      });
    } finally {
      this.starting = false;
    }
  }

  /** Stop the spent container set and start a fresh one in its place. */
  private async replaceContainer(): Promise<void> {
    if (!this.relaunch) throw new UpstreamError('UPSTREAM_CONNECT', `${this.name} cannot be started again`);
    // The spent set goes first: the fresh one takes the same names.
    await this.server.stop().catch(() => {});
    this.server = this.relaunch();
    this.broken = undefined;
    this.exited = new Promise<string>((resolve) => {
      this.exitReported = resolve;
    });
    this.watch(this.server);
  }

  private async connectOnce(prior: PriorDiscovery | undefined): Promise<UpstreamClient> {
    const server = this.server;
    const stdio = await server.start();
    const stdout = stdio.stdout as NodeJS.ReadableStream & { errored?: Error | null };
    if (stdout.errored) this.connectionBroke(stdout.errored);
    else
      stdout.once('error', (error: Error) => {
        if (server === this.server) this.connectionBroke(error);
      });
    if (this.broken !== undefined) throw new UpstreamError('UPSTREAM_CONNECT', this.broken);
    const transport = new StreamTransport(
      stdio.stdout,
      stdio.stdin,
      () => {
        stdio.stdin.end();
      },
      answerCapBytes(this.limits.maxResultBytes),
    );
    const mounts = stdio.mounts ?? [];
    const client = new UpstreamClient(this.name, this.timeouts, this.limits, {
      grants: grantsOf(this.config),
      roots: () => mounts,
    });
    this.client = client;
    client.describeLoss = async () => {
      if (this.broken !== undefined) return `${this.broken} before the server answered`;
      const reason = await this.waitForExit(EXIT_REPORT_WAIT_MS);
      return reason
        ? `the server stopped before it answered: ${reason}`
        : 'the connection to the server closed before it answered';
    };
    client.onListChanged(() => this.changeListener?.());
    client.onLog((params) => this.logListener?.(params));
    client.onServerRequest((request) => {
      if (!this.serverRequestHandler)
        throw new ProtocolError(
          ProtocolErrorCode.MethodNotFound,
          `ringfence does not answer ${request.method}`,
        );
      return this.serverRequestHandler(request);
    });
    client.onResourceUpdated((uri) => this.resourceListener?.(uri));
    try {
      await client.connect(transport, prior);
    } catch (error) {
      const tail = this.server.stderr();
      throw new UpstreamError(
        'UPSTREAM_CONNECT',
        `${this.broken ?? (error as Error).message}${tail ? `; its stderr ends: ${tail.slice(-400)}` : ''}`,
        { cause: error },
      );
    }
    return client;
  }

  /**
   * The attached stdio failed (the engine's connection dropped, or its stream could not be
   * split): no answer can come, and nothing can be sent, although the container may still run.
   * The calls in flight end now with why, and the gateway marks the server stopped with it.
   */
  private connectionBroke(error: Error): void {
    if (this.closing || this.broken !== undefined) return;
    this.broken = `the connection to the server's container broke (${error.message})`;
    this.client?.failAll(new UpstreamError('UPSTREAM_LOST', `${this.broken} before the server answered`));
    this.closedListener?.(this.broken);
  }

  /** The exit reason, once the engine has reported it, waiting at most `ms` for it. */
  private waitForExit(ms: number): Promise<string | undefined> {
    return withTimeout(this.exited, ms, () => new GatewayError('TIMED_OUT', 'no exit reported')).catch(
      () => undefined,
    );
  }

  private get live(): UpstreamClient {
    if (!this.client) throw new UpstreamError('SERVER_NOT_STARTED', `${this.name} is not started`);
    return this.client;
  }

  capabilities(): UpstreamCapabilities {
    return this.live.capabilities();
  }

  instructions(): string | undefined {
    return this.live.instructions();
  }

  roots(): { roots: { uri: string; name: string }[] } {
    return this.live.roots();
  }

  era(): UpstreamEra {
    return this.live.era();
  }

  listTools(): Promise<ToolListing> {
    return this.live.listTools();
  }

  listPrompts(): Promise<PromptListing> {
    return this.live.listPrompts();
  }

  getPrompt(name: string, args: Record<string, string>, options: CallOptions = {}): Promise<unknown> {
    return this.live.getPrompt(name, args, options);
  }

  complete(params: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return this.live.complete(params, options.signal);
  }

  setLoggingLevel(level: string): Promise<void> {
    return this.live.setLoggingLevel(level);
  }

  callTool(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    return this.live.callTool(name, args, options);
  }

  onListChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  listResources(): Promise<ResourceListing> {
    return this.live.listResources();
  }

  listResourceTemplates(): Promise<ResourceTemplateListing> {
    return this.live.listResourceTemplates();
  }

  readResource(uri: string, options: CallOptions = {}): Promise<unknown> {
    return this.live.readResource(uri, options);
  }

  subscribeResource(uri: string, subscribe: boolean): Promise<void> {
    return this.live.subscribeResource(uri, subscribe);
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

  onClosed(listener: (reason: string) => void): void {
    this.closedListener = listener;
  }

  /** The last 8 KiB of the server's stderr, env values redacted. Never sent to the model. */
  stderr(): string {
    return this.server.stderr();
  }

  async close(): Promise<void> {
    this.closing = true;
    await Promise.all([this.client?.close().catch(() => {}), this.server.stop()]);
  }
}
