import { type CallLimits, DEFAULT_CALL_LIMITS } from '../../config/limits.js';
import type {
  CallOptions,
  PromptListing,
  ResourceListing,
  ResourceTemplateListing,
  ServerRequestHandler,
  ToolListing,
  Upstream,
  UpstreamCapabilities,
} from '../upstream.js';

/**
 * The one test double of the `Upstream` port. By default a server that starts, lists what it was
 * given, and answers every request with an empty success (a read fails: there is nothing to read); a test changes what it needs through
 * `script` (or a subclass overriding a method) and plays the server's side with `sendLog`,
 * `sendListChanged`, `sendResourceUpdated`, `sendRequest` and `lose`. Every request it receives is
 * recorded in `received`, in order, so a test can say what reached the server (and what did not).
 */
export interface FakeScript {
  readonly tools?: readonly unknown[];
  /** Listed prompts; offering prompts is declared when given. */
  readonly prompts?: readonly unknown[];
  /** Listed resources and templates; offering resources is declared when either is given. */
  readonly resources?: readonly unknown[];
  readonly resourceTemplates?: readonly unknown[];
  /** Overrides of what the server declares it offers. */
  readonly capabilities?: Partial<UpstreamCapabilities>;
  readonly destination?: string;
  /** Its entry's limits, over the defaults. */
  readonly limits?: Partial<CallLimits>;
  readonly start?: () => Promise<void>;
  readonly callTool?: (name: string, args: Record<string, unknown>, options?: CallOptions) => Promise<unknown>;
  readonly getPrompt?: (name: string, args: Record<string, string>, options?: CallOptions) => Promise<unknown>;
  readonly readResource?: (uri: string, options?: CallOptions) => Promise<unknown>;
  readonly complete?: (params: Record<string, unknown>, options?: { signal?: AbortSignal }) => Promise<unknown>;
  readonly subscribeResource?: (uri: string, subscribe: boolean) => Promise<void>;
  readonly setLoggingLevel?: (level: string) => Promise<void>;
}

/** One request the fake server received. */
export interface Received {
  readonly method: string;
  readonly params: unknown;
}

export class FakeUpstream implements Upstream {
  readonly limits: CallLimits;
  readonly destination: string;
  readonly received: Received[] = [];
  closed = false;
  private readonly listeners: {
    log?: (params: unknown) => void;
    listChanged?: () => void;
    resourceUpdated?: (uri: unknown) => void;
    closed?: (reason: string) => void;
    serverRequest?: ServerRequestHandler;
  } = {};

  constructor(
    readonly name: string,
    protected readonly script: FakeScript = {},
  ) {
    this.destination = script.destination ?? 'remote fake';
    this.limits = { ...DEFAULT_CALL_LIMITS, ...script.limits };
  }

  async start(): Promise<void> {
    await this.script.start?.();
  }

  capabilities(): UpstreamCapabilities {
    const resources = this.script.resources !== undefined || this.script.resourceTemplates !== undefined;
    return {
      prompts: this.script.prompts !== undefined,
      completions: this.script.complete !== undefined,
      logging: this.script.setLoggingLevel !== undefined,
      resources,
      subscribe: resources && this.script.subscribeResource !== undefined,
      ...this.script.capabilities,
    };
  }

  async listTools(): Promise<ToolListing> {
    return { tools: this.script.tools ?? [], problems: [] };
  }
  async listPrompts(): Promise<PromptListing> {
    return { prompts: this.script.prompts ?? [], problems: [] };
  }
  async listResources(): Promise<ResourceListing> {
    return { resources: this.script.resources ?? [], problems: [] };
  }
  async listResourceTemplates(): Promise<ResourceTemplateListing> {
    return { resourceTemplates: this.script.resourceTemplates ?? [], problems: [] };
  }

  async callTool(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<unknown> {
    this.received.push({ method: 'tools/call', params: { name, arguments: args } });
    return this.script.callTool ? this.script.callTool(name, args, options) : { content: [] };
  }
  async getPrompt(name: string, args: Record<string, string>, options?: CallOptions): Promise<unknown> {
    this.received.push({ method: 'prompts/get', params: { name, arguments: args } });
    return this.script.getPrompt ? this.script.getPrompt(name, args, options) : { messages: [] };
  }
  async readResource(uri: string, options?: CallOptions): Promise<unknown> {
    this.received.push({ method: 'resources/read', params: { uri } });
    if (!this.script.readResource) throw new Error('this fake upstream offers no resources to read');
    return this.script.readResource(uri, options);
  }
  async complete(params: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown> {
    this.received.push({ method: 'completion/complete', params });
    return this.script.complete ? this.script.complete(params, options) : { completion: { values: [] } };
  }
  async subscribeResource(uri: string, subscribe: boolean): Promise<void> {
    this.received.push({ method: subscribe ? 'resources/subscribe' : 'resources/unsubscribe', params: { uri } });
    await this.script.subscribeResource?.(uri, subscribe);
  }
  async setLoggingLevel(level: string): Promise<void> {
    this.received.push({ method: 'logging/setLevel', params: { level } });
    await this.script.setLoggingLevel?.(level);
  }

  onLog(listener: (params: unknown) => void): void {
    this.listeners.log = listener;
  }
  onListChanged(listener: () => void): void {
    this.listeners.listChanged = listener;
  }
  onResourceUpdated(listener: (uri: unknown) => void): void {
    this.listeners.resourceUpdated = listener;
  }
  onServerRequest(handler: ServerRequestHandler): void {
    this.listeners.serverRequest = handler;
  }
  onClosed(listener: (reason: string) => void): void {
    this.listeners.closed = listener;
  }
  async close(): Promise<void> {
    this.closed = true;
  }

  /** The server sends `notifications/message`. */
  sendLog(params: unknown): void {
    this.listeners.log?.(params);
  }
  /** The server says its tools, prompts or resources changed. */
  sendListChanged(): void {
    this.listeners.listChanged?.();
  }
  /** The server sends `notifications/resources/updated`. */
  sendResourceUpdated(uri: unknown): void {
    this.listeners.resourceUpdated?.(uri);
  }
  /** The server asks the client something (sampling, elicitation); refused when nobody listens. */
  sendRequest(
    method: Parameters<ServerRequestHandler>[0]['method'],
    params: unknown,
    signal: AbortSignal = new AbortController().signal,
    /** The owner of the call whose own stream carried it, as an HTTP upstream tells it. */
    owner?: object,
  ): Promise<unknown> {
    const handler = this.listeners.serverRequest;
    if (!handler) return Promise.reject(new Error('no handler for server requests'));
    return handler({ method, params, signal, ...(owner ? { owner } : {}) });
  }
  /** The connection is lost outside of close(). */
  lose(reason: string): void {
    this.listeners.closed?.(reason);
  }
}
