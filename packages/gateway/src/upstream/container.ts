import type { ContainerServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import {
  type ContainedServer,
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ToolListing,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { UpstreamClient } from './mcp-client.js';
import { StreamTransport } from './stream-transport.js';

/** A third-party MCP server in its own hardened container, spoken to over its attached stdio. */
export class ContainerUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  private client: UpstreamClient | undefined;
  private closing = false;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;

  constructor(
    config: ContainerServerConfig,
    private readonly server: ContainedServer,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
  ) {
    this.name = config.name;
    this.destination = `sandbox mcp-${config.name}`;
    server.onExit((reason) => {
      if (!this.closing) this.closedListener?.(reason);
    });
  }

  async start(): Promise<void> {
    const stdio = await this.server.start();
    const transport = new StreamTransport(stdio.stdout, stdio.stdin, () => {
      stdio.stdin.end();
    });
    this.client = new UpstreamClient(this.timeouts);
    this.client.onListChanged(() => this.changeListener?.());
    this.client.onLog((params) => this.logListener?.(params));
    try {
      await this.client.connect(transport);
    } catch (error) {
      const tail = this.server.stderr();
      throw new UpstreamError(
        'UPSTREAM_CONNECT',
        `${(error as Error).message}${tail ? `; its stderr ends: ${tail.slice(-400)}` : ''}`,
      );
    }
  }

  private get live(): UpstreamClient {
    if (!this.client) throw new UpstreamError('SERVER_NOT_STARTED', `${this.name} is not started`);
    return this.client;
  }

  capabilities(): UpstreamCapabilities {
    return this.live.capabilities();
  }

  listTools(): Promise<ToolListing> {
    return this.live.listTools();
  }

  listPrompts(): Promise<PromptListing> {
    return this.live.listPrompts();
  }

  getPrompt(
    name: string,
    args: Record<string, string>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.live.getPrompt(name, args, options.signal);
  }

  complete(params: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return this.live.complete(params, options.signal);
  }

  setLoggingLevel(level: string): Promise<void> {
    return this.live.setLoggingLevel(level);
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.live.callTool(name, args, options.signal);
  }

  onListChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  onLog(listener: (params: unknown) => void): void {
    this.logListener = listener;
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
