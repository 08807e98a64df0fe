import type { IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import type { JSONRPCMessage, Transport, TransportSendOptions } from '@modelcontextprotocol/client';
import { GatewayError } from '../errors.js';
import { UpstreamError } from '../ports/errors.js';
import { checkedTraceparent } from '../traces/index.js';
import { type EventStreamLimits, EventStreamParser } from './answer-stream.js';
import { CONNECTION_LOST_CODE } from './connection-loss.js';
import {
  discard,
  errorBody,
  HttpEndpoint,
  HttpStatusError,
  jsonMessages,
  lost,
  mediaType,
  ok,
  readBody,
  readEventStream,
  shortened,
} from './http-endpoint.js';
import { standardHeaders } from './mcp-headers.js';

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
/** Server requests awaiting our answer whose carrying call is kept (more: the oldest forgotten). */
const MAX_CARRIED = 1024;

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
  /** The server's registered name, for the commands a refusal names (default: NAME). */
  readonly server?: string;
  /** Per-request credentials (an OAuth registration's `remote-auth` `TokenHolder`). */
  readonly authorizer?: RequestAuthorizer;
}

/**
 * Who gives each request its `Authorization` and hears of a 401/403 (remote-auth/holder.ts). The
 * logic is there; the transport only asks before each request and retries a refused POST once.
 */
export interface RequestAuthorizer {
  /** The header's value for a request to `url`, or undefined for none; rejects when none can be had. */
  authorization(url: URL): Promise<string | undefined>;
  /** True: retry once; false: fail as any refusal; rejects with the error the request fails with. */
  refused(refusal: {
    status: number;
    wwwAuthenticate: string | undefined;
    sent: string | undefined;
    retried: boolean;
  }): Promise<boolean>;
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

/** A request that names a protocol version in its `_meta`: only a modern (2026) one does. */
const isModern = (message: JSONRPCMessage): boolean =>
  standardHeaders(message)['mcp-protocol-version'] !== undefined;

/**
 * The per-request headers the client asks for: only `Mcp-Param-*` (from the pinned tool's
 * schema) and a checked W3C `traceparent`, and only with a token name, so no caller can override the session, the protocol
 * version, the content type or a registered credential through them.
 */
function perRequest(headers: TransportSendOptions['headers']): OutgoingHttpHeaders {
  const out: OutgoingHttpHeaders = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers))
    if (name === 'traceparent' && checkedTraceparent(value)) out.traceparent = value as string;
    else if (
      /^mcp-param-[!#$%&'*+\-.^_`|~0-9a-z]+$/i.test(name) &&
      typeof value === 'string' &&
      /^[\t\x20-\x7e]*$/.test(value)
    )
      out[name.toLowerCase()] = value;
  return out;
}

const headerText = (value: string | string[] | number | undefined): string | undefined =>
  Array.isArray(value) ? value.join(', ') : value === undefined ? undefined : String(value);

function progressTokenOf(message: JSONRPCMessage): string | undefined {
  const token = (message as { params?: { _meta?: { progressToken?: unknown } } }).params?._meta
    ?.progressToken;
  return typeof token === 'string' ? token : undefined;
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
  /** One POST per request: on a modern connection the SDK cancels by aborting `requestSignal`. */
  readonly hasPerRequestStream = true;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: Transport['onmessage'];
  private session: string | undefined;
  private protocolVersion: string | undefined;
  private readonly endpoint: HttpEndpoint;
  private readonly url: URL;
  private readonly configured: Record<string, string> = {};
  private cached:
    | { post: OutgoingHttpHeaders; get: OutgoingHttpHeaders; common: OutgoingHttpHeaders }
    | undefined;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly reconnection: Reconnection;
  private serverRetryMs: number | undefined;
  private started = false;
  private closed = false;
  /**
   * Server requests that came on a forwarded call's own answer stream, by their id: the call's
   * progress token, or null once the id came twice before it was answered (a server reusing an
   * id cannot make one call's request pass for another's). Forgotten when answered; bounded.
   */
  private readonly carried = new Map<string | number, string | null>();

  constructor(
    url: URL,
    private readonly options: HttpTransportOptions,
  ) {
    this.url = url;
    this.endpoint = new HttpEndpoint(url, options.ca, options.server);
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
    if (this.started) throw new GatewayError('TRANSPORT_MISUSE', 'HttpClientTransport already started');
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

  /**
   * `headers` with this request's Authorization from the authorizer (asked every time: a token
   * refreshed or a new login is used at once); a configured one is never sent beside it.
   */
  private async authorized(headers: OutgoingHttpHeaders): Promise<OutgoingHttpHeaders> {
    const authorizer = this.options.authorizer;
    if (!authorizer) return headers;
    const { authorization: _configured, ...rest } = headers;
    const value = await authorizer.authorization(this.url);
    return value === undefined ? rest : { ...rest, authorization: value };
  }

  private async authorizedExchange(method: string, headers: OutgoingHttpHeaders): Promise<IncomingMessage> {
    return this.endpoint.exchange(method, await this.authorized(headers));
  }

  async send(message: JSONRPCMessage, options: TransportSendOptions = {}): Promise<void> {
    // Our answer to a server request: its id may be used again from now on.
    if (('result' in message || 'error' in message) && message.id !== undefined)
      this.carried.delete(message.id);
    try {
      await this.post(message, options);
    } catch (error) {
      this.onerror?.(error as Error);
      throw error;
    }
  }

  private async post(message: JSONRPCMessage, options: TransportSendOptions, retried = false): Promise<void> {
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
    let res: IncomingMessage;
    const headers = await this.authorized({
      ...this.headers().post,
      ...perRequest(options.headers),
      ...standardHeaders(message),
    });
    try {
      res = await this.endpoint.exchange('POST', headers, JSON.stringify(message), options.requestSignal);
    } catch (error) {
      // Cancelled before the answer's head came: the SDK has already ended the request.
      if (options.requestSignal?.aborted) return;
      throw error;
    }
    const session = res.headers['mcp-session-id'];
    if (typeof session === 'string' && session && session !== this.session) {
      this.session = session;
      this.cached = undefined;
    }
    const status = res.statusCode ?? 0;
    if (!ok(res)) {
      const text = await errorBody(res);
      // Refused for its token: the authorizer refreshes (then one retry) or says a login is needed.
      if (
        (status === 401 || status === 403) &&
        this.options.authorizer &&
        (await this.options.authorizer.refused({
          status,
          wwwAuthenticate: headerText(res.headers['www-authenticate']),
          sent: headerText(headers.authorization),
          retried,
        })) &&
        !retried
      )
        return this.post(message, options, true);
      // A modern server refuses a request it cannot take (a header that disagrees with the body:
      // -32020) with 400 and the JSON-RPC error: that is its answer, delivered as the SDK does.
      if (status === 400 && request && isModern(message) && this.answerFromRefusal(text, request.id)) return;
      throw new HttpStatusError(
        status,
        `the server answered HTTP ${status} to a POST${text ? `: ${shortened(text)}` : ''}`,
        text,
        res.statusMessage ?? '',
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
    // A modern request is cancelled by closing its stream: the SDK aborts `requestSignal`. The
    // answer is not awaited any more, so the stream ending then is no breakage to report.
    const signal = options.requestSignal;
    if (signal) {
      const cancel = () => {
        awaited.answered = true;
        res.destroy();
      };
      if (signal.aborted) cancel();
      else {
        signal.addEventListener('abort', cancel, { once: true });
        res.once('close', () => signal.removeEventListener('abort', cancel));
      }
      if (signal.aborted) return;
    }
    if (type === 'text/event-stream') {
      // A modern `subscriptions/listen` stream stays open for as long as the connection: each of
      // its events is capped, not their total, which would end it after so many notifications.
      const limits =
        request.method === 'subscriptions/listen'
          ? { maxEventBytes: this.options.maxAnswerBytes }
          : { maxTotalBytes: this.options.maxAnswerBytes };
      this.readAnswer(res, awaited, limits, undefined, 0);
      return;
    }
    if (type !== 'application/json') {
      discard(res);
      throw new UpstreamError(
        'UPSTREAM_MALFORMED',
        `the server answered with content type ${JSON.stringify(res.headers['content-type'] ?? '')}, neither JSON nor an event stream`,
      );
    }
    const messages = jsonMessages(await readBody(res, this.options.maxAnswerBytes));
    for (const each of messages) this.deliver(each, awaited);
    if (!awaited.answered)
      throw new UpstreamError('UPSTREAM_LOST', "the server's answer did not answer the request");
  }

  /** Deliver a refusal's JSON-RPC error body if it answers `id`; false if it does not. */
  private answerFromRefusal(text: string, id: string | number): boolean {
    let parsed: JSONRPCMessage[];
    try {
      parsed = jsonMessages(Buffer.from(text, 'utf8'));
    } catch {
      return false;
    }
    const answer = parsed.length === 1 ? parsed[0] : undefined;
    if (!answer || !('error' in answer) || answer.id !== id) return false;
    this.deliver(answer);
    return true;
  }

  /**
   * The progress token of the call on whose answer stream the server request `id` came, if it
   * came on one and only one such stream; undefined otherwise (the session's GET stream, a
   * resumed stream asked for by token, an id the server used twice).
   */
  callOf(id: string | number): string | undefined {
    return this.carried.get(id) ?? undefined;
  }

  private noteCarried(message: JSONRPCMessage, awaited: Awaited | undefined): void {
    if (!isRequest(message)) return;
    const token = awaited?.token;
    const known = this.carried.get(message.id);
    if (known !== undefined || token === undefined) {
      // Seen before (on any stream) or now on a stream of no call: nobody's for sure.
      if (known !== undefined) this.carried.set(message.id, null);
      return;
    }
    if (this.carried.size >= MAX_CARRIED) {
      const oldest = this.carried.keys().next().value;
      if (oldest !== undefined) this.carried.delete(oldest);
    }
    this.carried.set(message.id, token);
  }

  private deliver(message: JSONRPCMessage, awaited?: Awaited): void {
    this.noteCarried(message, awaited);
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
        error: { code: CONNECTION_LOST_CODE, message: error.message },
      });
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
    readEventStream(res, parser, (error) => {
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
      this.authorizedExchange('GET', { ...this.headers().get, 'last-event-id': lastEventId }).then(
        (res) => {
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
      res = await this.authorizedExchange(
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
    readEventStream(res, parser, (error) => {
      if (this.closed) return;
      if (error) this.onerror?.(error);
      this.relisten(parser.lastEventId ?? lastEventId, parser.events > 0 ? 0 : (attempt ?? 0) + 1);
    });
  }

  private relisten(lastEventId: string | undefined, attempt: number): void {
    if (this.closed) return;
    if (attempt >= this.reconnection.maxRetries) {
      this.onerror?.(
        new GatewayError(
          'CLOSED_EARLY',
          `the server's event stream could not be reopened (${attempt} attempts)`,
        ),
      );
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
      const res = await this.authorizedExchange('DELETE', this.headers().common);
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
    this.endpoint.close();
    this.onclose?.();
  }
}
