import { pathToFileURL } from 'node:url';
import {
  CLIENT_CAPABILITIES_META_KEY,
  Client,
  type JSONRPCResultResponse,
  LOG_LEVEL_META_KEY,
  type PriorDiscovery,
  ProtocolError,
  ProtocolErrorCode,
  type Transport,
} from '@modelcontextprotocol/client';
import { z } from 'zod';
import { type CallLimits, DEFAULT_CALL_LIMITS } from '../config/limits.js';
import { currentOwner } from '../ports/call-owner.js';
import { UpstreamError } from '../ports/errors.js';
import {
  type CallOptions,
  type ClientGrants,
  DEFAULT_TIMEOUTS,
  type MountedFolder,
  type PromptListing,
  type ResourceListing,
  type ResourceTemplateListing,
  SERVER_REQUEST_METHODS,
  type ServerRequestHandler,
  type ServerRequestMethod,
  type ToolListing,
  type UpstreamCapabilities,
  type UpstreamEra,
  type UpstreamInput,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { passThroughJsonSchemaValidator } from '../schema/index.js';
import { callThroughUpstreamTask } from '../tasks/upstream-task.js';
import { InFlightCalls } from './calls.js';
import { declaredCapabilities, missingCapabilityOf } from './client-capabilities.js';
import { isConnectionLoss } from './connection-loss.js';
import { ListenStream } from './listen.js';
import { paramHeaders } from './mcp-headers.js';
import { StreamTransport } from './stream-transport.js';
import { LooseResult } from './wire-check.js';

/**
 * The SDK's client, with its response dispatch reachable: a plain result answer the transport
 * recognised (`wire-check.ts`) goes straight to it, not through the SDK's message schemas again.
 */
class GatewayClient extends Client {
  deliverResponse(message: JSONRPCResultResponse): void {
    this._onresponse(message);
  }
}

/**
 * How long the era probe (`server/discover`, once per registration) waits: a 2025 server on a
 * pipe that stays silent is then taken as 2025 (on HTTP, silence is an outage and fails the start).
 */
export const probeTimeoutMs = (timeouts: UpstreamTimeouts): number =>
  Math.min(10_000, Math.floor(timeouts.connectMs / 2));

export const MAX_LIST_PAGES = 64;
/** Per listing: tools, or prompts. */
export const MAX_LISTED_TOOLS = 4096;
/** All pages of one listing together, as JSON. */
export const MAX_LISTING_BYTES = 32 * 1024 * 1024;
/** An upstream may say "tools/prompts changed" at most this often; extra notices are folded into one. */
export const LIST_CHANGED_MIN_INTERVAL_MS = 2_000;

// Deliberately loose: the listing is parsed tool by tool, so one malformed tool withholds only
// itself instead of failing the whole page as the SDK's strict schema would.
const LooseListPages = {
  tools: z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() }),
  prompts: z.looseObject({ prompts: z.array(z.unknown()), nextCursor: z.string().optional() }),
  resources: z.looseObject({ resources: z.array(z.unknown()), nextCursor: z.string().optional() }),
  'resources/templates': z.looseObject({
    resourceTemplates: z.array(z.unknown()),
    nextCursor: z.string().optional(),
  }),
};
/** Where each listing keeps its items. */
const LIST_KEY = {
  tools: 'tools',
  prompts: 'prompts',
  resources: 'resources',
  'resources/templates': 'resourceTemplates',
} as const;

export const CLIENT_INFO = { name: 'ringfence-gateway', version: '0.1.0' } as const;

/** What a server may ask of the gateway's client for it. */
export interface ClientSide {
  /** Declared at initialisation; every request is still decided when it comes. */
  readonly grants: ClientGrants;
  /** The server's mounts as it sees them (none for a remote server); `roots/list` answers them. */
  readonly roots: () => readonly MountedFolder[];
}

/** What an entry's registration asks to declare (the gateway hands in the entry capped by the policy). */
export const grantsOf = (config: {
  allow_sampling?: boolean;
  allow_elicitation?: boolean;
}): ClientGrants => ({
  sampling: config.allow_sampling === true,
  elicitation: config.allow_elicitation === true,
});

export const NO_CLIENT_SIDE: ClientSide = {
  grants: { sampling: false, elicitation: false },
  roots: () => [],
};

/** `roots/list` for a server: its mounts as `file://` URIs of the paths it sees, nothing else. */
export function rootsOf(mounts: readonly MountedFolder[]): { uri: string; name: string }[] {
  return mounts.map((mount) => ({
    uri: pathToFileURL(mount.target).href,
    name: `${mount.target} (${mount.readOnly ? 'read-only' : 'writable'})`,
  }));
}

/**
 * A retry's params for a 2026 server: the answers under its own keys and its own requestState,
 * as the relay gave them (both absent on a first call).
 */
function retryParams(input: UpstreamInput): Record<string, unknown> {
  return {
    ...(input.inputResponses !== undefined ? { inputResponses: input.inputResponses } : {}),
    ...(input.requestState !== undefined ? { requestState: input.requestState } : {}),
  };
}

/**
 * An SDK client for one upstream with the gateway's rules: it declares `roots` (answered with the
 * server's mounts) and sampling or elicitation only where registration and policy allow them; no
 * schema compiling inside the SDK, bounded paginated listing, and timeouts on everything.
 */
export class UpstreamClient {
  readonly client: GatewayClient;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private resourceListener: ((uri: unknown) => void) | undefined;
  private lastChange = 0;
  private changeTimer: NodeJS.Timeout | undefined;
  private readonly calls = new InFlightCalls();
  private serverRequestHandler: ServerRequestHandler | undefined;
  /** A modern server's subscriptions/listen stream (absent on a 2025 server). */
  private listen: ListenStream | undefined;
  /** The log level asked for, sent along with each request to a modern server. */
  private logLevel: string | undefined;
  /** Each call in flight's owner (`ports/call-owner.ts`), by the call's progress token. */
  private readonly owners = new Map<string, object>();
  /** Which call's answer stream carried a server request, by its id (HTTP only; see `attributeBy`). */
  private carrierOf: ((id: string | number) => string | undefined) | undefined;

  constructor(
    /** The server's name, for the messages of calls that end without its answer. */
    readonly server: string,
    readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
    readonly limits: CallLimits = DEFAULT_CALL_LIMITS,
    private readonly side: ClientSide = NO_CLIENT_SIDE,
  ) {
    this.client = new GatewayClient(CLIENT_INFO, {
      capabilities: {
        roots: {},
        ...(side.grants.sampling ? { sampling: {} } : {}),
        ...(side.grants.elicitation ? { elicitation: { form: {} } } : {}),
      },
      jsonSchemaValidator: passThroughJsonSchemaValidator,
      // Each upstream is spoken to in its own era: probed once with server/discover (the verdict
      // is then kept with the registration and handed to connect() as `prior`).
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: probeTimeoutMs(timeouts), maxRetries: 0 } },
      // A modern server's input_required answer is never fulfilled by the SDK behind the gateway's
      // back: it comes back as it is to a caller that relays it (`CallOptions.upstreamInput`),
      // and fails the call for any other.
      inputRequired: { autoFulfill: false },
    });
    // The fallback, not setRequestHandler: the SDK refuses a handler for a capability not
    // declared, and a request the gateway did not declare must still be answered with why, and
    // audited (a server may send it anyway).
    this.client.fallbackRequestHandler = async (request, ctx) => {
      if (request.method === 'roots/list') return { roots: rootsOf(side.roots()) };
      if (
        (SERVER_REQUEST_METHODS as readonly string[]).includes(request.method) &&
        this.serverRequestHandler
      ) {
        // The call whose own answer stream carried it, if the transport can tell: its owner.
        const token = this.carrierOf?.(ctx.mcpReq.id);
        const owner = token !== undefined ? this.owners.get(token) : undefined;
        return this.serverRequestHandler({
          method: request.method as ServerRequestMethod,
          params: request.params,
          signal: ctx.mcpReq.signal,
          ...(owner ? { owner } : {}),
        });
      }
      throw new ProtocolError(
        ProtocolErrorCode.MethodNotFound,
        `ringfence does not answer ${request.method}`,
      );
    };
    // Either list changing re-lists both: one folded notice, one re-pin.
    this.client.setNotificationHandler('notifications/tools/list_changed', () => this.listChanged());
    this.client.setNotificationHandler('notifications/prompts/list_changed', () => this.listChanged());
    this.client.setNotificationHandler('notifications/resources/list_changed', () => this.listChanged());
    this.client.setNotificationHandler('notifications/resources/updated', (notification) =>
      this.resourceListener?.(notification.params.uri),
    );
    this.client.setNotificationHandler('notifications/message', (notification) =>
      this.logListener?.(notification.params),
    );
    // Replaces the SDK's own progress handling: the tokens are the gateway's (see InFlightCalls),
    // and progress for any other token is dropped.
    this.client.setNotificationHandler('notifications/progress', (notification) => {
      const { progressToken, ...params } = notification.params;
      this.calls.progress(progressToken, params);
    });
  }

  /** What the server declared at initialisation. */
  capabilities(): UpstreamCapabilities {
    const declared = this.client.getServerCapabilities() ?? {};
    return {
      prompts: declared.prompts !== undefined,
      completions: declared.completions !== undefined,
      logging: declared.logging !== undefined,
      resources: declared.resources !== undefined,
      subscribe: declared.resources?.subscribe === true,
    };
  }

  onLog(listener: (params: unknown) => void): void {
    this.logListener = listener;
  }

  onServerRequest(handler: ServerRequestHandler): void {
    this.serverRequestHandler = handler;
  }

  /**
   * How to tell which call's answer stream carried a server request (`HttpClientTransport.callOf`):
   * such a request then goes to that call's owner only. Without it (stdio) nothing is attributed.
   */
  attributeBy(carrierOf: (id: string | number) => string | undefined): void {
    this.carrierOf = carrierOf;
  }

  /** Calls in flight (for tests and for people). */
  get inFlight(): number {
    return this.calls.size;
  }

  /**
   * Connect in the server's era: `prior` (the verdict kept with the registration) connects
   * without probing; without it the SDK probes (`server/discover`) and falls back to `initialize`.
   * A modern server then gets its listen stream, so its changes still reach the gateway.
   */
  async connect(transport: Transport, prior?: PriorDiscovery): Promise<void> {
    await this.client.connect(transport, { timeout: this.timeouts.connectMs, ...(prior ? { prior } : {}) });
    // Only once connected: the era probe and the handshake read the transport's messages themselves.
    if (transport instanceof StreamTransport)
      transport.onresponse = (message) => this.client.deliverResponse(message);
    if (this.era() !== 'modern') return;
    this.listen = new ListenStream(
      this.client,
      this.timeouts.listMs,
      () => this.listChanged(),
      (error) => this.client.onerror?.(error),
    );
    // Not fatal: a server that offers no listen still serves calls; its changes go unseen until
    // the next start, as for a 2025 server that never says its lists changed.
    await this.listen.open().catch((error: unknown) => this.client.onerror?.(error as Error));
  }

  /** The era the server speaks (once connected). */
  era(): UpstreamEra {
    return this.client.getProtocolEra() === 'modern' ? 'modern' : 'legacy';
  }

  /** What to keep with the registration so the next start connects without probing. */
  verdict(): PriorDiscovery {
    const discover = this.client.getDiscoverResult();
    return discover ? { kind: 'modern', discover } : { kind: 'legacy' };
  }

  /** The server's own instructions (either era), still untrusted. */
  instructions(): string | undefined {
    return this.client.getInstructions();
  }

  /**
   * `_meta` a forwarded request carries besides the gateway's own, on a modern server only: the
   * log level the client asked for (2026 has no `logging/setLevel`: the level travels per
   * request), and the client capabilities of `capabilitiesMeta`.
   */
  private meta(caller: ClientGrants | undefined): Record<string, unknown> {
    if (this.era() !== 'modern') return {};
    return {
      ...this.capabilitiesMeta(caller),
      ...(this.logLevel !== undefined ? { [LOG_LEVEL_META_KEY]: this.logLevel } : {}),
    };
  }

  /**
   * On a modern server, the client capabilities a request declares: the caller's as far as the
   * registration allows (`declaredCapabilities`), in place of the SDK's per-connection envelope,
   * which would declare the registration's whatever the caller can answer. A request no caller
   * answers the input requests of (a listing, a completion, a task) declares roots only.
   */
  private capabilitiesMeta(caller: ClientGrants | undefined): Record<string, unknown> {
    return this.era() === 'modern'
      ? { [CLIENT_CAPABILITIES_META_KEY]: declaredCapabilities(this.side.grants, caller) }
      : {};
  }

  /**
   * Why the calls in flight lost their connection, for people; a container's upstream waits a
   * moment for the exit code, which the engine reports just after the stdio closes.
   */
  describeLoss: () => Promise<string> = async () => 'the connection to the server closed before it answered';

  /** End one call at once: its answer can no longer come (its stream broke). */
  failCall(token: string, error: Error): boolean {
    return this.calls.fail(token, error);
  }

  /** End every call in flight at once: the connection or the server is gone. */
  failAll(error: Error): void {
    this.calls.failAll(error);
  }

  onListChanged(listener: () => void): void {
    this.changeListener = listener;
  }

  private listChanged(): void {
    if (this.changeTimer) return;
    const wait = Math.max(0, this.lastChange + LIST_CHANGED_MIN_INTERVAL_MS - Date.now());
    this.changeTimer = setTimeout(() => {
      this.changeTimer = undefined;
      this.lastChange = Date.now();
      this.changeListener?.();
    }, wait);
    this.changeTimer.unref();
  }

  async listTools(): Promise<ToolListing> {
    const { items, problems } = await this.listAll('tools');
    return { tools: items, problems };
  }

  async listPrompts(): Promise<PromptListing> {
    const { items, problems } = await this.listAll('prompts');
    return { prompts: items, problems };
  }

  private async listAll(
    what: keyof typeof LooseListPages,
  ): Promise<{ items: unknown[]; problems: string[] }> {
    const items: unknown[] = [];
    const problems: string[] = [];
    const seenCursors = new Set<string>();
    let cursor: string | undefined;
    let bytes = 0;
    for (let page = 0; ; page++) {
      if (page >= MAX_LIST_PAGES) {
        problems.push(`the listing was cut after ${MAX_LIST_PAGES} pages`);
        break;
      }
      const result = (await this.client.request(
        {
          method: `${what}/list`,
          params: {
            ...(cursor === undefined ? {} : { cursor }),
            ...(this.era() === 'modern' ? { _meta: this.capabilitiesMeta(undefined) } : {}),
          },
        },
        LooseListPages[what],
        { timeout: this.timeouts.listMs },
      )) as { nextCursor?: string } & Record<(typeof LIST_KEY)[typeof what], unknown[]>;
      const listed = result[LIST_KEY[what]];
      bytes += JSON.stringify(listed).length;
      if (bytes > MAX_LISTING_BYTES) {
        problems.push(`the listing was cut at ${MAX_LISTING_BYTES} bytes`);
        break;
      }
      items.push(...listed);
      if (items.length > MAX_LISTED_TOOLS) {
        items.length = MAX_LISTED_TOOLS;
        problems.push(`the listing was cut at ${MAX_LISTED_TOOLS} ${what}`);
        break;
      }
      cursor = result.nextCursor;
      if (cursor === undefined) break;
      if (seenCursors.has(cursor)) {
        problems.push('the server repeated a pagination cursor; the listing was stopped there');
        break;
      }
      seenCursors.add(cursor);
    }
    return { items, problems };
  }

  /**
   * One call under the server's limits, capped further by `options.cap`: the timeout without
   * progress restarts at each progress notification, the ceiling does not. Whatever ends the call
   * early (the caller's cancel, a timeout) cancels the upstream request as well.
   */
  callTool(name: string, args: Record<string, unknown>, options: CallOptions = {}): Promise<unknown> {
    // Mcp-Param-* only where the 2026 transport reads them, from the pinned schema only.
    const headers =
      options.inputSchema !== undefined && this.era() === 'modern'
        ? paramHeaders(options.inputSchema, args)
        : {};
    return this.forward('tools/call', { name, arguments: args }, options, headers);
  }

  /** `prompts/get` under the same limits, cancel and progress as a tool call. */
  getPrompt(name: string, args: Record<string, string>, options: CallOptions = {}): Promise<unknown> {
    return this.forward('prompts/get', { name, arguments: args }, options);
  }

  private forward(
    method: 'tools/call' | 'prompts/get' | 'resources/read',
    params: Record<string, unknown>,
    options: CallOptions,
    headers: Record<string, string> = {},
  ): Promise<unknown> {
    const capped = options.cap !== undefined && options.cap.ms < this.limits.ceilingMs;
    const ceilingMs = capped ? options.cap!.ms : this.limits.ceilingMs;
    const idleMs = Math.min(this.limits.idleMs, ceilingMs);
    const seconds = (ms: number) => Math.round(ms / 100) / 10;
    // Only a caller that relays a 2026 server's input_required is handed one (a task's is not).
    const relayed = options.upstreamInput !== undefined && this.era() === 'modern' && !options.viaTask;
    const retry = relayed ? retryParams(options.upstreamInput!) : {};
    // Read once, as the call starts (see ports/call-owner.ts).
    const owner = options.owner ?? currentOwner();
    return this.calls.run(
      (token, signal) => {
        if (owner) this.owners.set(token, owner);
        // The SDK's own timer is only a backstop: the call's timers above end it first.
        // The trace context goes in `_meta` (MCP's convention, every transport) and, to a remote
        // server, as the W3C header too (upstream/http-transport.ts passes only that one on).
        const sentHeaders = options.traceparent ? { ...headers, traceparent: options.traceparent } : headers;
        const send = (m: string, p: Record<string, unknown>, allowInputRequired = false) =>
          this.client.request({ method: m, params: p } as never, LooseResult, {
            signal,
            timeout: ceilingMs + 1_000,
            ...(Object.keys(sentHeaders).length > 0 ? { headers: sentHeaders } : {}),
            ...(allowInputRequired ? { allowInputRequired } : {}),
          });
        const sent = {
          ...params,
          ...retry,
          _meta: {
            ...this.meta(options.clientCapabilities),
            progressToken: token,
            ...(options.traceparent ? { traceparent: options.traceparent } : {}),
          },
        };
        const answer =
          options.viaTask && method === 'tools/call'
            ? callThroughUpstreamTask(
                this.server,
                {
                  // The server keeps its task no longer than the call may run.
                  create: () => send(method, { ...sent, task: { ttl: ceilingMs } }),
                  result: (taskId) => send('tasks/result', { taskId }),
                  cancel: (taskId) =>
                    this.client.request(
                      { method: 'tasks/cancel', params: { taskId } } as never,
                      LooseResult,
                      {
                        timeout: 5_000,
                      },
                    ),
                },
                signal,
              )
            : send(method, sent, relayed);
        // One settling step (not a catch and a finally): the owner is forgotten either way.
        return answer.then(
          (value) => {
            this.owners.delete(token);
            return value;
          },
          async (error: unknown) => {
            try {
              // The SDK's own words for it are a bare "Connection closed".
              if (isConnectionLoss(error))
                throw new UpstreamError('UPSTREAM_LOST', await this.describeLoss());
              // A 2026 server's -32021: it needs a capability this request did not declare. Said
              // for the gateway's client, which is told it as that error (never as a result).
              throw (
                missingCapabilityOf(error, this.server, this.side.grants, options.clientCapabilities) ?? error
              );
            } finally {
              this.owners.delete(token);
            }
          },
        );
      },
      {
        idleMs,
        ceilingMs,
        signal: options.signal,
        onProgress: options.onProgress,
        endings: {
          idle: () =>
            new UpstreamError(
              'CALL_TIMEOUT',
              `no answer and no progress from ${this.server} for ${seconds(idleMs)} s, so the call was cancelled. If the tool needs longer, register the server again with a longer --call-timeout (ringfence mcp rm ${this.server}, then ringfence mcp add ${this.server} … --call-timeout SECONDS)`,
            ),
          ceiling: () =>
            new UpstreamError(
              'CALL_CEILING',
              capped
                ? `the call ran for ${seconds(ceilingMs)} s, the longest ${options.cap!.source} allows, so it was cancelled. Ask your policy admin if the tool needs longer`
                : `the call ran for ${seconds(ceilingMs)} s, the longest a call to ${this.server} may run (its call ceiling), so it was cancelled. If the tool needs longer, register the server again with a higher --call-ceiling (ringfence mcp rm ${this.server}, then ringfence mcp add ${this.server} … --call-ceiling SECONDS)`,
            ),
          cancelled: () => new UpstreamError('CALL_CANCELLED', 'the client cancelled the call'),
        },
      },
    );
  }

  /** The server's `roots/list` answer: its mounts as it sees them (none for a remote server). */
  roots(): { roots: { uri: string; name: string }[] } {
    return { roots: rootsOf(this.side.roots()) };
  }

  async complete(params: Record<string, unknown>, signal?: AbortSignal): Promise<unknown> {
    const withMeta = this.era() === 'modern' ? { ...params, _meta: this.meta(undefined) } : params;
    return this.client.request({ method: 'completion/complete', params: withMeta } as never, LooseResult, {
      timeout: this.timeouts.listMs,
      ...(signal ? { signal } : {}),
    });
  }

  // --- resources (issue 12): listing, reads and subscriptions ---

  onResourceUpdated(listener: (uri: unknown) => void): void {
    this.resourceListener = listener;
  }

  async listResources(): Promise<ResourceListing> {
    const { items, problems } = await this.listAll('resources');
    return { resources: items, problems };
  }

  async listResourceTemplates(): Promise<ResourceTemplateListing> {
    const { items, problems } = await this.listAll('resources/templates');
    return { resourceTemplates: items, problems };
  }

  /** `resources/read` under the same limits, cancel and progress as a tool call. */
  readResource(uri: string, options: CallOptions = {}): Promise<unknown> {
    return this.forward('resources/read', { uri }, options);
  }

  async subscribeResource(uri: string, subscribe: boolean): Promise<void> {
    // 2026 has no resources/subscribe: the URIs go in the listen stream's filter.
    if (this.listen) return this.listen.subscribe(uri, subscribe);
    await this.client.request(
      { method: subscribe ? 'resources/subscribe' : 'resources/unsubscribe', params: { uri } } as never,
      LooseResult,
      { timeout: this.timeouts.listMs },
    );
  }

  // --- end resources ---

  async setLoggingLevel(level: string): Promise<void> {
    if (this.era() === 'modern') {
      this.logLevel = level;
      return;
    }
    await this.client.request({ method: 'logging/setLevel', params: { level } } as never, LooseResult, {
      timeout: this.timeouts.listMs,
    });
  }

  async close(): Promise<void> {
    if (this.changeTimer) clearTimeout(this.changeTimer);
    await this.listen?.close();
    await this.client.close();
  }
}
