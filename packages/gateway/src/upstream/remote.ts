import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { HttpServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import {
  DEFAULT_TIMEOUTS,
  type PromptListing,
  type ToolListing,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamTimeouts,
} from '../ports/upstream.js';
import { withTimeout } from '../util/timeout.js';
import { UpstreamClient } from './mcp-client.js';

/**
 * fetch that never follows a redirect: a server that answers 3xx is refused, so a registered
 * https endpoint cannot bounce our requests (and its headers) somewhere else.
 */
export const noRedirectFetch: typeof fetch = async (input, init) => {
  const response = await fetch(input, { ...init, redirect: 'manual' });
  if (response.status >= 300 && response.status < 400) {
    await response.body?.cancel().catch(() => {});
    const location = response.headers.get('location') ?? 'no location';
    throw new UpstreamError(
      'UPSTREAM_REDIRECT',
      `the server answered ${response.status} (redirect to ${location}); redirects are not followed`,
    );
  }
  if (!response.body) return response;
  // The session's long-lived GET stream may run for hours: what is capped there is one event
  // (the SDK buffers an event until its blank line), not the whole stream.
  if ((init?.method ?? 'GET') === 'GET') {
    return new Response(limitedBody(response.body, MAX_RESPONSE_BYTES, { perEvent: true }), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  }
  // The answer to one request may not grow without bound (the SDK buffers it whole).
  // A declared length is enforced by fetch itself (it fails on more bytes), so only a body of
  // unknown length (chunked, or an event stream) needs counting — which costs on every chunk.
  const declared = response.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared)) {
    if (Number(declared) <= MAX_RESPONSE_BYTES) return response;
    await response.body.cancel().catch(() => {});
    throw new UpstreamError(
      'UPSTREAM_ANSWER_TOO_LARGE',
      `the server's answer is ${declared} bytes, over the ${MAX_RESPONSE_BYTES}-byte cap`,
    );
  }
  return new Response(limitedBody(response.body, MAX_RESPONSE_BYTES), {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
};

/** Largest answer to one request from a remote server. */
export const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

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
  private connection: { client: UpstreamClient; transport: StreamableHTTPClientTransport } | undefined;
  private changeListener: (() => void) | undefined;
  private logListener: ((params: unknown) => void) | undefined;
  private closedListener: ((reason: string) => void) | undefined;
  private closing = false;

  constructor(
    private readonly config: HttpServerConfig,
    private readonly timeouts: UpstreamTimeouts = DEFAULT_TIMEOUTS,
  ) {
    this.name = config.name;
    this.destination = `remote ${new URL(config.url).host}`;
  }

  async start(): Promise<void> {
    this.connection = await this.connect();
  }

  private async connect() {
    const transport = new StreamableHTTPClientTransport(new URL(this.config.url), {
      requestInit: { headers: { ...this.config.headers } },
      fetch: noRedirectFetch,
    });
    const client = new UpstreamClient(this.timeouts);
    client.onListChanged(() => this.changeListener?.());
    client.onLog((params) => this.logListener?.(params));
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

  getPrompt(
    name: string,
    args: Record<string, string>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.withSessionRetry((client) => client.getPrompt(name, args, options.signal));
  }

  complete(params: Record<string, unknown>, options: { signal?: AbortSignal } = {}): Promise<unknown> {
    return this.withSessionRetry((client) => client.complete(params, options.signal));
  }

  setLoggingLevel(level: string): Promise<void> {
    return this.withSessionRetry((client) => client.setLoggingLevel(level));
  }

  callTool(
    name: string,
    args: Record<string, unknown>,
    options: { signal?: AbortSignal } = {},
  ): Promise<unknown> {
    return this.withSessionRetry((client) => client.callTool(name, args, options.signal));
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
