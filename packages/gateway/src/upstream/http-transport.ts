import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { UpstreamError } from '../ports/errors.js';
import { describeNetworkError, type EventStreamLimits, EventStreamParser } from './answer-stream.js';

/** Errors of a connection that was never made (as against one that broke). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
/** OpenSSL's and Node's codes for a certificate that does not verify. */
const TLS_REFUSED = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_/;
/** What is read of an error answer's body, for its message. */
const ERROR_TEXT_BYTES = 4096;
/** Idle keep-alive connections are dropped after this (lowered by the server's Keep-Alive hint). */
const IDLE_SOCKET_MS = 4_000;

/** A status the transport does not take as an answer; 404 to a request with a session id = session expired. */
export class HttpStatusError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'HttpStatusError';
  }
}

/** When the session's event stream, or a call's answer stream, is asked for again. */
export interface Reconnection {
  readonly initialDelayMs: number;
  readonly maxDelayMs: number;
  readonly growFactor: number;
  /** Attempts in a row that bring nothing before giving up. */
  readonly maxRetries: number;
}
/** The SDK client transport's own schedule. */
export const DEFAULT_RECONNECTION: Reconnection = {
  initialDelayMs: 1_000,
  maxDelayMs: 30_000,
  growFactor: 1.5,
  maxRetries: 2,
};
/** A server's `retry:` below this would have us hammer it. */
const MIN_RETRY_MS = 100;

export interface HttpTransportOptions {
  /** The registration's headers (authorization and the like), sent with every request. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Largest answer to one request; on the session's GET stream, largest event. */
  readonly maxAnswerBytes: number;
  /** The answer stream of the call with this progress token broke: its answer cannot come. */
  readonly onCallBroken?: (token: string, error: UpstreamError) => void;
  /** Trust anchors in place of Node's (tests); default: Node's store and NODE_EXTRA_CA_CERTS. */
  readonly ca?: string | Buffer;
  readonly reconnection?: Reconnection;
}

/** A request whose answer is awaited on an event stream. */
interface Awaited {
  readonly id: string | number;
  /** The gateway's progress token of a forwarded call: what `onCallBroken` names. */
  readonly token: string | undefined;
  readonly onresumptiontoken: ((token: string) => void) | undefined;
  /** A resumed stream answers under the original id; it is passed on under this one. */
  readonly replayId?: string | number;
  answered: boolean;
}

const isRequest = (
  message: JSONRPCMessage,
): message is JSONRPCMessage & { id: string | number; method: string } =>
  'method' in message && 'id' in message && message.id !== undefined;

function progressTokenOf(message: JSONRPCMessage): string | undefined {
  const token = (message as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta
    ?.progressToken;
  return typeof token === 'string' ? token : undefined;
}

function mediaType(res: IncomingMessage): string {
  return (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

const ok = (res: IncomingMessage) => (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;

/** Read and drop a body we have no use for, keeping the connection for the next request. */
function discard(res: IncomingMessage): void {
  let seen = 0;
  res.on('error', () => {});
  res.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > ERROR_TEXT_BYTES) res.destroy();
  });
}

/** The whole body, refused over `max` bytes (declared or counted) and failed if the connection drops. */
function readBody(res: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = res.headers['content-length'];
    if (declared !== undefined && /^\d+$/.test(declared) && Number(declared) > max) {
      res.destroy();
      reject(
        new UpstreamError(
          'UPSTREAM_ANSWER_TOO_LARGE',
          `the server's answer is ${declared} bytes, over the ${max}-byte cap`,
        ),
      );
      return;
    }
    const chunks: Buffer[] = [];
    let seen = 0;
    let failure: unknown;
    res.on('data', (chunk: Buffer) => {
      seen += chunk.length;
      if (seen > max) {
        res.destroy();
        reject(
          new UpstreamError(
            'UPSTREAM_ANSWER_TOO_LARGE',
            `the server's answer exceeded ${max} bytes; it was cut off`,
          ),
        );
      } else chunks.push(chunk);
    });
    res.on('error', (error) => {
      failure = error;
    });
    res.on('end', () => resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, seen)));
    res.on('close', () => {
      if (!res.complete) reject(dropped(failure));
    });
  });
}

/** Up to ERROR_TEXT_BYTES of an error answer, for its message. */
async function errorText(res: IncomingMessage): Promise<string> {
  const text = await readBody(res, ERROR_TEXT_BYTES).then(
    (body) => body.toString('utf8'),
    () => '',
  );
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

function lost(error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const why = describeNetworkError(error);
  const code = (error as { code?: unknown })?.code;
  if (typeof code === 'string' && TLS_REFUSED.test(code))
    return new UpstreamError(
      'UPSTREAM_LOST',
      `the server's TLS certificate was not accepted (${why}): check the URL; a private CA can be trusted with NODE_EXTRA_CA_CERTS`,
      { cause: error },
    );
  return new UpstreamError(
    'UPSTREAM_LOST',
    UNREACHABLE.has(why)
      ? `the server could not be reached (${why})`
      : `the connection to the server dropped (${why}) before it answered`,
    { cause: error },
  );
}

function dropped(error: unknown): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_LOST',
    `the connection to the server dropped (${describeNetworkError(error ?? new Error('closed'))}) before it answered; the call was ended`,
    { cause: error },
  );
}

/**
 * The client side of MCP's streamable HTTP for one remote server, on `node:http`/`node:https`
 * with a keep-alive agent: the SDK's `StreamableHTTPClientTransport`, wire for wire (session id,
 * protocol version and Accept headers, 202 for notifications, the session's GET stream with 405
 * tolerated, resumption with Last-Event-ID, DELETE to end the session), read from the bytes with
 * no fetch and no web streams. What it adds: it never follows a redirect (a registered endpoint
 * cannot bounce our requests and their headers elsewhere), caps what one answer may take in
 * memory, and watches the event stream that answers each request: when it breaks, is garbled, or
 * ends without the answer, that request ends at once (a call through `onCallBroken`, anything
 * else with an error answer), rather than at its timeout.
 */
export class HttpClientTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private session: string | undefined;
  private protocolVersion: string | undefined;
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;
  private readonly target: RequestOptions;
  private readonly configured: Record<string, string> = {};
  private cached:
    | { post: OutgoingHttpHeaders; get: OutgoingHttpHeaders; common: OutgoingHttpHeaders }
    | undefined;
  /** Requests whose answer is still coming (ended at once by `close`). */
  private readonly open = new Set<ClientRequest>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly reconnection: Reconnection;
  private serverRetryMs: number | undefined;
  private started = false;
  private closed = false;

  constructor(
    url: URL,
    private readonly options: HttpTransportOptions,
  ) {
    const https = url.protocol === 'https:';
    this.request = https ? httpsRequest : httpRequest;
    this.agent = https
      ? new HttpsAgent({
          keepAlive: true,
          timeout: IDLE_SOCKET_MS,
          ...(options.ca ? { ca: options.ca } : {}),
        })
      : new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
    this.target = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || (https ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      agent: this.agent,
    };
    // One spelling per header: ours would otherwise be sent beside a configured one in another case.
    for (const [name, value] of Object.entries(options.headers ?? {}))
      this.configured[name.toLowerCase()] = value;
    this.reconnection = options.reconnection ?? DEFAULT_RECONNECTION;
  }

  get sessionId(): string | undefined {
    return this.session;
  }

  setProtocolVersion(version: string): void {
    this.protocolVersion = version;
    this.cached = undefined;
  }

  async start(): Promise<void> {
    if (this.started) throw new Error('HttpClientTransport already started');
    this.started = true;
  }

  /** Per request kind, rebuilt only when the session or the protocol version changes. */
  private headers() {
    if (!this.cached) {
      const common: OutgoingHttpHeaders = {
        ...(this.session ? { 'mcp-session-id': this.session } : {}),
        ...(this.protocolVersion ? { 'mcp-protocol-version': this.protocolVersion } : {}),
        ...this.configured,
      };
      this.cached = {
        common,
        post: {
          ...common,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        get: { ...common, accept: 'text/event-stream' },
      };
    }
    return this.cached;
  }

  /** One request; resolves with the answer's head, refusing a redirect. */
  private exchange(method: string, headers: OutgoingHttpHeaders, body?: string): Promise<IncomingMessage> {
    if (this.closed)
      return Promise.reject(new UpstreamError('UPSTREAM_CLOSED', 'the connection to the server is closed'));
    return new Promise((resolve, reject) => {
      let req: ClientRequest;
      try {
        req = this.request({ ...this.target, method, headers });
      } catch (error) {
        reject(error);
        return;
      }
      this.open.add(req);
      req.once('close', () => this.open.delete(req));
      req.on('error', (error) =>
        reject(
          this.closed
            ? new UpstreamError('UPSTREAM_CLOSED', 'the connection to the server is closed')
            : lost(error),
        ),
      );
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.destroy();
          const location = res.headers.location ?? 'no location';
          reject(
            new UpstreamError(
              'UPSTREAM_REDIRECT',
              `the server answered ${status} (redirect to ${location.slice(0, 200)}); redirects are not followed`,
            ),
          );
          return;
        }
        resolve(res);
      });
      req.end(body);
    });
  }

  async send(message: JSONRPCMessage, options: TransportSendOptions = {}): Promise<void> {
    try {
      await this.post(message, options);
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  private async post(message: JSONRPCMessage, options: TransportSendOptions): Promise<void> {
    const request = isRequest(message) ? message : undefined;
    if (options.resumptionToken) {
      // The caller asks for the rest of an earlier answer stream rather than sending again.
      this.resume(
        {
          id: request?.id ?? '',
          token: undefined,
          onresumptiontoken: options.onresumptiontoken,
          ...(request ? { replayId: request.id } : {}),
          answered: false,
        },
        options.resumptionToken,
        0,
      );
      return;
    }
    const res = await this.exchange('POST', this.headers().post, JSON.stringify(message));
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string' && session && session !== this.session) {
      this.session = session;
      this.cached = undefined;
    }
    const status = res.statusCode ?? 0;
    if (!ok(res)) {
      const text = await errorText(res);
      throw new HttpStatusError(
        status,
        `the server answered HTTP ${status} to a POST${text ? `: ${text}` : ''}`,
      );
    }
    if (status === 202 || !request) {
      // Nothing is awaited: a body other than a 202's (empty) is not read, as the SDK cancels it.
      if (status === 202) discard(res);
      else res.destroy();
      if (status === 202 && 'method' in message && message.method === 'notifications/initialized')
        void this.listen(undefined, undefined);
      return;
    }
    const type = mediaType(res);
    const awaited: Awaited = {
      id: request.id,
      token: progressTokenOf(request),
      onresumptiontoken: options.onresumptiontoken,
      answered: false,
    };
    if (type === 'text/event-stream') {
      this.readAnswer(res, awaited, { maxTotalBytes: this.options.maxAnswerBytes }, undefined, 0);
      return;
    }
    if (type !== 'application/json') {
      discard(res);
      throw new UpstreamError(
        'UPSTREAM_MALFORMED',
        `the server answered with content type ${JSON.stringify(res.headers['content-type'] ?? '')}, neither JSON nor an event stream`,
      );
    }
    const body = await readBody(res, this.options.maxAnswerBytes);
    let data: unknown;
    try {
      data = JSON.parse(body.toString('utf8'));
    } catch {
      throw new UpstreamError('UPSTREAM_MALFORMED', "the server's answer is not JSON");
    }
    const messages: JSONRPCMessage[] = [];
    for (const item of Array.isArray(data) ? data : [data]) {
      const parsed = JSONRPCMessageSchema.safeParse(item);
      if (!parsed.success)
        throw new UpstreamError('UPSTREAM_MALFORMED', "the server's answer is not a JSON-RPC message");
      messages.push(parsed.data);
    }
    for (const each of messages) this.deliver(each, awaited);
    if (!awaited.answered)
      throw new UpstreamError('UPSTREAM_LOST', "the server's answer did not answer the request");
  }

  private deliver(message: JSONRPCMessage, awaited?: Awaited): void {
    if (awaited && ('result' in message || 'error' in message) && message.id === awaited.id) {
      awaited.answered = true;
      if (awaited.replayId !== undefined) message = { ...message, id: awaited.replayId };
    }
    try {
      this.onmessage?.(message);
    } catch (error) {
      this.onerror?.(error as Error);
    }
  }

  /** Its answer can no longer come: end it now rather than at its timeout. */
  private broken(awaited: Awaited, error: UpstreamError): void {
    if (this.closed || awaited.answered) return;
    awaited.answered = true;
    if (awaited.token && this.options.onCallBroken) this.options.onCallBroken(awaited.token, error);
    else
      this.deliver({
        jsonrpc: '2.0',
        id: awaited.replayId ?? awaited.id,
        error: { code: ErrorCode.ConnectionClosed, message: error.message },
      });
  }

  /**
   * Read an event stream to its end, which `onEnd` learns of: clean, or with the problem (the
   * connection dropped, garbage, a cap exceeded — the stream is then dropped too).
   */
  private readEvents(
    res: IncomingMessage,
    parser: EventStreamParser,
    onEnd: (error: UpstreamError | undefined) => void,
  ): void {
    let over = false;
    let failure: unknown;
    const finish = (error: UpstreamError | undefined) => {
      if (over) return;
      over = true;
      onEnd(error);
    };
    res.on('data', (chunk: Buffer) => {
      if (over) return;
      const problem = parser.feed(chunk);
      if (problem) {
        res.destroy();
        finish(problem);
      }
    });
    res.on('error', (error) => {
      failure = error;
    });
    res.on('end', () => finish(undefined));
    res.on('close', () => finish(res.complete ? undefined : dropped(failure)));
  }

  /** The event stream answering one request (a POST's, or a GET resuming it). */
  private readAnswer(
    res: IncomingMessage,
    awaited: Awaited,
    limits: EventStreamLimits,
    previousId: string | undefined,
    attempt: number,
  ): void {
    const parser = new EventStreamParser(
      {
        onMessage: (message) => this.deliver(message, awaited),
        onEventId: (id) => awaited.onresumptiontoken?.(id),
        onRetry: (ms) => this.retryAfter(ms),
      },
      limits,
    );
    this.readEvents(res, parser, (error) => {
      if (this.closed || awaited.answered) return;
      if (error) return this.broken(awaited, error);
      const lastId = parser.lastEventId ?? previousId;
      if (lastId === undefined)
        return this.broken(
          awaited,
          new UpstreamError(
            'UPSTREAM_LOST',
            'the server ended its answer stream before it answered; the call was ended',
          ),
        );
      // Ended after an event id: the server means us to ask for the rest (a stream that brought
      // nothing counts against the retries, so a server cannot keep us asking for ever).
      const next = parser.events > 0 ? 0 : attempt + 1;
      if (next >= this.reconnection.maxRetries)
        return this.broken(
          awaited,
          new UpstreamError(
            'UPSTREAM_LOST',
            `the server ended its answer stream ${next} times in a row without sending anything; the call was ended`,
          ),
        );
      this.resume(awaited, lastId, next);
    });
  }

  /** Ask for the rest of an answer stream after `lastEventId`; if that fails, the request ends. */
  private resume(awaited: Awaited, lastEventId: string, attempt: number): void {
    this.later(attempt, () => {
      this.exchange('GET', { ...this.headers().get, 'last-event-id': lastEventId }).then(
        async (res) => {
          if (!ok(res)) {
            discard(res);
            return this.broken(
              awaited,
              new UpstreamError(
                'UPSTREAM_LOST',
                `the server refused to resume the answer stream (HTTP ${res.statusCode}); the call was ended`,
              ),
            );
          }
          this.readAnswer(res, awaited, { maxEventBytes: this.options.maxAnswerBytes }, lastEventId, attempt);
        },
        (error: unknown) => {
          const why = lost(error);
          this.broken(
            awaited,
            why.code === 'UPSTREAM_LOST'
              ? new UpstreamError('UPSTREAM_LOST', `${why.message}; the call was ended`, { cause: error })
              : new UpstreamError(
                  'UPSTREAM_LOST',
                  `the answer stream could not be resumed (${why.message}); the call was ended`,
                  { cause: error },
                ),
          );
        },
      );
    });
  }

  /**
   * The session's own event stream (server requests and notifications outside any call), opened
   * after initialisation and reopened when it ends; a server that offers none answers 405.
   * `attempt` is undefined for the first opening, which is not retried (as the SDK does).
   */
  private async listen(lastEventId: string | undefined, attempt: number | undefined): Promise<void> {
    let res: IncomingMessage;
    try {
      res = await this.exchange(
        'GET',
        lastEventId ? { ...this.headers().get, 'last-event-id': lastEventId } : this.headers().get,
      );
      if (res.statusCode === 405) return discard(res);
      if (!ok(res)) {
        discard(res);
        throw new HttpStatusError(
          res.statusCode ?? 0,
          `the server refused its event stream (HTTP ${res.statusCode})`,
        );
      }
    } catch (error) {
      if (this.closed) return;
      this.onerror?.(error as Error);
      if (attempt !== undefined) this.relisten(lastEventId, attempt + 1);
      return;
    }
    const parser = new EventStreamParser(
      { onMessage: (message) => this.deliver(message), onRetry: (ms) => this.retryAfter(ms) },
      { maxEventBytes: this.options.maxAnswerBytes },
    );
    this.readEvents(res, parser, (error) => {
      if (this.closed) return;
      if (error) this.onerror?.(error);
      this.relisten(parser.lastEventId ?? lastEventId, parser.events > 0 ? 0 : (attempt ?? 0) + 1);
    });
  }

  private relisten(lastEventId: string | undefined, attempt: number): void {
    if (this.closed) return;
    if (attempt >= this.reconnection.maxRetries) {
      this.onerror?.(new Error(`the server's event stream could not be reopened (${attempt} attempts)`));
      return;
    }
    this.later(attempt, () => void this.listen(lastEventId, attempt));
  }

  private retryAfter(ms: number): void {
    this.serverRetryMs = Math.min(Math.max(ms, MIN_RETRY_MS), this.reconnection.maxDelayMs);
  }

  private later(attempt: number, run: () => void): void {
    if (this.closed) return;
    const { initialDelayMs, growFactor, maxDelayMs } = this.reconnection;
    const delay = this.serverRetryMs ?? Math.min(initialDelayMs * growFactor ** attempt, maxDelayMs);
    const timer = setTimeout(() => {
      this.timers.delete(timer);
      if (!this.closed) run();
    }, delay);
    timer.unref();
    this.timers.add(timer);
  }

  /** Tell the server the session is over (405: it does not end sessions that way). */
  async terminateSession(): Promise<void> {
    if (!this.session) return;
    try {
      const res = await this.exchange('DELETE', this.headers().common);
      discard(res);
      if (!ok(res) && res.statusCode !== 405)
        throw new HttpStatusError(
          res.statusCode ?? 0,
          `the server refused to end the session (HTTP ${res.statusCode})`,
        );
      this.session = undefined;
      this.cached = undefined;
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearTimeout(timer);
    this.timers.clear();
    for (const req of this.open) req.destroy();
    this.agent.destroy();
    this.onclose?.();
  }
}
