import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { answerCapBytes, type CallLimits, callLimitsOf, DEFAULT_CALL_LIMITS } from '../config/limits.js';
import type { HttpServerConfig } from '../config/servers.js';
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
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { withTimeout } from '../util/timeout.js';
import { describeNetworkError, watchAnswerStream } from './answer-stream.js';
import { grantsOf, UpstreamClient } from './mcp-client.js';

/** Errors of a connection that was never made (as against one that broke). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** Answer streams remembered for resumption at once; older ones are forgotten first. */
const MAX_RESUMABLE = 256;

/** What the gateway's fetch needs to know of the connection it serves. */
export interface FetchGuard {
  /** Largest answer to one request (each event, on the session's GET stream). */
  readonly maxAnswerBytes: number;
  /** The answer stream of the call with this progress token broke: its answer cannot come. */
  readonly onCallBroken?: (token: string, error: UpstreamError) => void;
}

/** The gateway's progress token of a `tools/call` request body, if it is one. */
function callToken(body: unknown): string | undefined {
  if (typeof body !== 'string' || !body.includes('"progressToken"')) return undefined;
  try {
    const message = JSON.parse(body) as {
      method?: unknown;
      params?: { _meta?: { progressToken?: unknown } };
    };
    const token = message.method === 'tools/call' ? message.params?._meta?.progressToken : undefined;
    return typeof token === 'string' ? token : undefined;
  } catch {
    return undefined;
  }
}

function headerOf(init: RequestInit | undefined, name: string): string | undefined {
  const value = new Headers(init?.headers).get(name);
  return value ?? undefined;
}

/**
 * The fetch of one remote connection. It never follows a redirect (a registered https endpoint
 * cannot bounce our requests and their headers elsewhere), caps what one answer may take in
 * memory, and watches the event stream that answers each call: when it breaks, is garbled, or
 * ends without the answer, `onCallBroken` ends that call at once. A stream that ended after an
 * event id may be resumed (the SDK asks again with Last-Event-ID); if asking fails, the call ends.
 */
export function guardedFetch(guard: FetchGuard): typeof fetch {
  const { maxAnswerBytes, onCallBroken } = guard;
  /** Event id after which a call's stream ended unanswered → that call's token. */
  const resumable = new Map<string, string>();
  const watch = (body: ReadableStream<Uint8Array>, token: string, maxBytes?: number) =>
    watchAnswerStream(
      body,
      (end) => {
        if (end.kind === 'broken') onCallBroken?.(token, end.error);
        else if (end.kind === 'resumable') {
          resumable.set(end.lastEventId, token);
          // A stream never resumed (its call ended another way) must not be kept for ever.
          if (resumable.size > MAX_RESUMABLE) resumable.delete(resumable.keys().next().value as string);
        }
      },
      maxBytes,
    );

  return async (input, init) => {
    const method = init?.method ?? 'GET';
    const resumedId = method === 'GET' ? headerOf(init, 'last-event-id') : undefined;
    const token = method === 'POST' ? callToken(init?.body) : resumedId && resumable.get(resumedId);
    if (resumedId !== undefined) resumable.delete(resumedId);
    let response: Response;
    try {
      response = await fetch(input, { ...init, redirect: 'manual' });
    } catch (error) {
      if ((error as Error)?.name === 'AbortError') throw error;
      const why = describeNetworkError(error);
      const lost = new UpstreamError(
        'UPSTREAM_LOST',
        UNREACHABLE.has(why)
          ? `the server could not be reached (${why})`
          : `the connection to the server dropped (${why}) before it answered`,
        { cause: error },
      );
      if (token && resumedId !== undefined) onCallBroken?.(token, lost);
      throw lost;
    }
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel().catch(() => {});
      const location = response.headers.get('location') ?? 'no location';
      throw new UpstreamError(
        'UPSTREAM_REDIRECT',
        `the server answered ${response.status} (redirect to ${location}); redirects are not followed`,
      );
    }
    if (token && resumedId !== undefined && !response.ok)
      onCallBroken?.(
        token,
        new UpstreamError(
          'UPSTREAM_LOST',
          `the server refused to resume the answer stream (HTTP ${response.status}); the call was ended`,
        ),
      );
    if (!response.body) return response;
    const eventStream = mediaTypeOf(response) === 'text/event-stream';
    // The session's long-lived GET stream may run for hours: what is capped there is one event
    // (the SDK buffers an event until its blank line), not the whole stream.
    if (method === 'GET') {
      const limited = limitedBody(response.body, maxAnswerBytes, { perEvent: true });
      return rebody(response, token && eventStream && response.ok ? watch(limited, token) : limited);
    }
    // The answer to one request may not grow without bound (the SDK buffers it whole).
    // A declared length is enforced by fetch itself (it fails on more bytes), so only a body of
    // unknown length (chunked, or an event stream) needs counting — which costs on every chunk.
    const declared = response.headers.get('content-length');
    if (declared !== null && /^\d+$/.test(declared) && !eventStream) {
      if (Number(declared) <= maxAnswerBytes) return response;
      await response.body.cancel().catch(() => {});
      throw new UpstreamError(
        'UPSTREAM_ANSWER_TOO_LARGE',
        `the server's answer is ${declared} bytes, over the ${maxAnswerBytes}-byte cap`,
      );
    }
    // A call's answer stream is watched anyway: the watcher counts it too (one stream layer per
    // call, not two). Anything else gets the plain counter.
    if (token && eventStream && response.ok)
      return rebody(response, watch(response.body, token, maxAnswerBytes));
    return rebody(response, limitedBody(response.body, maxAnswerBytes));
  };
}

function mediaTypeOf(response: Response): string {
  return (response.headers.get('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
}

function rebody(response: Response, body: ReadableStream<Uint8Array>): Response {
  return new Response(body, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}

/** Largest answer to one request from a remote server with the default result cap. */
export const MAX_RESPONSE_BYTES = answerCapBytes(DEFAULT_CALL_LIMITS.maxResultBytes);

/** The gateway's fetch with the default caps and no calls to watch (start-up checks, tests). */
export const noRedirectFetch: typeof fetch = guardedFetch({ maxAnswerBytes: MAX_RESPONSE_BYTES });

const LF = 10;

/**
 * Bytes of the event still being received after this chunk: counting restarts after the last
 * blank line ("\n\n", "\r\n\r\n", or a "\n" that ended the previous chunk followed by one here).
 */
export function bytesSinceEventEnd(chunk: Uint8Array, before: number, previousByte: number): number {
  const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  const lf = bytes.lastIndexOf('\n\n');
  const crlf = bytes.lastIndexOf('\r\n\r\n');
  let end = -1;
  if (lf >= 0) end = lf + 2;
  if (crlf >= 0) end = Math.max(end, crlf + 4);
  if (end < 0 && previousByte === LF && bytes[0] === LF) end = 1;
  return end >= 0 ? bytes.length - end : before + bytes.length;
}

/**
 * The body, failing once more than `max` bytes have come — in all, or with `perEvent` since the
 * last blank line of an event stream (a plain pull, cheaper than a pipe).
 */
function limitedBody(
  body: ReadableStream<Uint8Array>,
  max: number,
  options: { perEvent?: boolean } = {},
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  let previous = 0;
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { done, value } = await reader.read();
      if (done) return controller.close();
      seen = options.perEvent ? bytesSinceEventEnd(value, seen, previous) : seen + value.byteLength;
      previous = value.byteLength > 0 ? (value[value.byteLength - 1] ?? 0) : previous;
      if (seen > max) {
        await reader.cancel().catch(() => {});
        return controller.error(
          new UpstreamError(
            'UPSTREAM_ANSWER_TOO_LARGE',
            `the server's answer exceeded ${max} bytes; it was cut off`,
          ),
        );
      }
      controller.enqueue(value);
    },
    cancel: (reason) => reader.cancel(reason),
  });
}

/** A remote MCP server over streamable HTTP (the official SDK transport). */
export class RemoteUpstream implements Upstream {
  readonly name: string;
  readonly destination: string;
  readonly limits: CallLimits;
  private connection: { client: UpstreamClient; transport: StreamableHTTPClientTransport } | undefined;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private serverRequestHandler: ServerRequestHandler | undefined;
  private resourceListener: ((uri: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;
  private closing = false;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
  ) {
    this.name = config.name;
    this.destination = `remote ${new URL(config.url).host}`;
    this.limits = callLimitsOf(config);
  }

  async start(): Promise<void> {
    this.connection = await this.connect();
  }

  private async connect() {
    // A remote server has no mounts: its roots are an empty list.
    const client = new UpstreamClient(this.name, this.timeouts, this.limits, {
      grants: grantsOf(this.config),
      roots: () => [],
    });
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      requestInit: { headers: { ...this.config.headers } },
      fetch: guardedFetch({
        maxAnswerBytes: answerCapBytes(this.limits.maxResultBytes),
        onCallBroken: (token, error) => client.failCall(token, error),
      }),
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
        client.connect(transport),
        this.timeouts.connectMs,
        () =>
          new UpstreamError(
            'UPSTREAM_CONNECT',
            `connecting to ${this.config.url} timed out after ${this.timeouts.connectMs} ms`,
          ),
      );
    } catch (error) {
      await transport.close().catch(() => {});
      throw new UpstreamError(
        'UPSTREAM_CONNECT',
        `cannot connect to ${this.config.url}: ${(error as Error).message}`,
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
      if (!(error instanceof StreamableHTTPError) || error.code !== 404 || !transport.sessionId) throw error;
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

  capabilities(): UpstreamCapabilities {
    return this.live.client.capabilities();
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
      throw new McpError(ErrorCode.MethodNotFound, `ringfence does not answer ${request.method}`);
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
      () => new Error('ending the session timed out'),
    ).catch(() => {});
    await connection.client.close().catch(() => {});
  }
}
