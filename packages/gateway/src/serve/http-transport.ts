/**
 * One `mcp serve --http` session as an SDK `Transport`, on plain `node:http`. It replaces the
 * SDK's StreamableHTTPServerTransport, which turns every Node request into web Request/Response
 * objects (through @hono/node-server) and writes every answer through web streams, headers, event
 * and end each on their own. The protocol it speaks is the SDK's, case by case: the same statuses,
 * JSON-RPC codes and messages for 400/404/405/406/409/413/415, one initialisation per session,
 * batches of at most 100, notifications and responses answered 202.
 *
 * Streams (2025-era streamable HTTP, SEP-1699): a POST that carries requests is answered with an
 * SSE stream whose head is written at once, so a client sees the call accepted before its result;
 * a client that negotiated 2025-11-25 or later first gets a priming event (an id, empty data and
 * `retry`). Every event has an id `<streamId>:<n>` and is kept in the session's bounded replay
 * buffer (http-replay.ts) until a keep-alive tick after its stream was delivered in full (or the
 * buffer's bounds push it out): a client whose connection broke
 * GETs with `Last-Event-ID` and receives exactly the events after it, then the rest of the stream.
 * A client that went away leaves its stream's events there for that resumption; one that stops
 * reading loses its connection once MAX_UNSENT_BYTES wait unsent, not the events. A stream still
 * open after KEEPALIVE_MS gets a comment, so a long call keeps its connection.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import {
  isInitializeRequest,
  isJsonContentType,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
  SUPPORTED_PROTOCOL_VERSIONS,
  type Transport,
  type TransportSendOptions,
} from '@modelcontextprotocol/server';
import { GatewayError } from '../errors.js';
import { checkedTraceparent } from '../traces/index.js';
import { readBoundedBody } from '../util/bounded-body.js';
import { ReplayBuffer, type SseStream } from './http-replay.js';

/** The SDK's default cap on a request body (4 MiB): a bigger one is refused with 413. */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
/** The SDK's cap on the messages of one JSON-RPC batch. */
export const MAX_BATCH_SIZE = 100;
/** Bytes one connection may hold unsent for a client that does not read: past it, the connection is dropped. */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
/** The reconnection delay the priming event asks of a client whose stream broke. */
export const RETRY_MS = 1_000;
/** The first protocol revision whose clients take an event with empty data (the priming event). */
const PRIMING_SINCE = '2025-11-25';
const KEEPALIVE_MS = 15_000;
/** A session this transport no longer serves (ended, or a request raced its DELETE), and what to do. */
const SESSION_GONE = 'Session not found; send a new initialize request without Mcp-Session-Id.';

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
} as const;

/** The answer to one POST that carried requests, until every one of them has its response. */
interface Answer {
  /** Where its messages go (and are kept for a resume). */
  readonly stream: SseStream;
  /** The requests it carries. */
  readonly ids: RequestId[];
  /** Of those, the ones whose response has not been sent. */
  unanswered: number;
}

const isResponse = (m: JSONRPCMessage): boolean => 'result' in m || 'error' in m;
const isRequest = (m: JSONRPCMessage): boolean => 'method' in m && 'id' in m;
/** Whether a client of this revision takes the priming event (older clients fail on empty data). */
const takesPriming = (version: unknown): boolean =>
  typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version) && version >= PRIMING_SINCE;

export function jsonError(
  res: ServerResponse,
  status: number,
  code: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify({ jsonrpc: '2.0', error: { code, message }, id: null });
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    ...headers,
  });
  res.end(body);
}

export class HttpSessionTransport implements Transport {
  sessionId?: string;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;

  private initialized = false;
  private closed = false;
  /** The initialize request, until its response says which revision the session speaks. */
  private initializeId: RequestId | undefined;
  /** The revision the session negotiated. */
  private protocolVersion: string | undefined;
  /** Where the response to each request in flight goes. */
  private readonly answers = new Map<RequestId, Answer>();
  /** The session's GET stream: server messages that belong to no request (list_changed…). */
  private standalone: SseStream | undefined;
  private readonly replay: ReplayBuffer;
  /** Streams delivered in full since the last keep-alive tick, and those from the tick before. */
  private delivered = new Set<SseStream>();
  private deliveredBefore = new Set<SseStream>();
  private keepalive: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      newSessionId: () => string;
      onsessioninitialized?: (id: string) => void;
      maxBodyBytes?: number;
      maxUnsentBytes?: number;
      /** Between keep-alive comments (and sweeps of delivered streams); tests lower it. */
      keepAliveMs?: number;
      /** Bounds of the session's replay buffer (events, bytes). */
      replayEvents?: number;
      replayBytes?: number;
    },
  ) {
    this.replay = new ReplayBuffer(options.replayEvents, options.replayBytes);
  }

  /** Requests whose response has not been sent yet (their client may be gone). */
  pending(): number {
    return this.answers.size;
  }

  /** Events kept for resumption, and their bytes. */
  kept(): { events: number; bytes: number } {
    return this.replay.size();
  }

  async start(): Promise<void> {
    // One timer for every stream of the session, rather than one per call.
    this.keepalive = setInterval(() => this.tick(), this.options.keepAliveMs ?? KEEPALIVE_MS);
    this.keepalive.unref();
  }

  /** `preread`: the POST body, when the HTTP entry already read it (bounded) to route the request. */
  async handleRequest(req: IncomingMessage, res: ServerResponse, preread?: Buffer): Promise<void> {
    if (this.closed) return jsonError(res, 404, -32001, SESSION_GONE);
    switch (req.method) {
      case 'POST':
        return this.post(req, res, preread);
      case 'GET':
        return this.get(req, res);
      case 'DELETE':
        return this.delete(req, res);
      default:
        this.onerror?.(new GatewayError('HTTP_REFUSED', 'Method not allowed.'));
        return jsonError(res, 405, -32000, 'Method not allowed.', { allow: 'GET, POST, DELETE' });
    }
  }

  private async post(req: IncomingMessage, res: ServerResponse, preread?: Buffer): Promise<void> {
    const accept = req.headers.accept;
    if (!accept?.includes('application/json') || !accept.includes('text/event-stream'))
      return this.refuse(
        res,
        406,
        -32000,
        'Not Acceptable: Client must accept both application/json and text/event-stream',
      );
    if (!isJsonContentType(req.headers['content-type']))
      return this.refuse(res, 415, -32000, 'Unsupported Media Type: Content-Type must be application/json');
    const max = this.options.maxBodyBytes ?? MAX_REQUEST_BODY_BYTES;
    let raw: unknown;
    try {
      const body = preread ? { tooLarge: false as const, body: preread } : await readBoundedBody(req, max);
      if (body.tooLarge) {
        this.onerror?.(
          new GatewayError('HTTP_REFUSED', `Payload Too Large: Request body must not exceed ${max} bytes`),
        );
        // The rest of the body is read and discarded, so the 413 reaches a client still sending
        // (closing with unread data would reset the connection under it).
        req.resume();
        return jsonError(res, 413, -32000, `Payload Too Large: Request body must not exceed ${max} bytes`);
      }
      raw = JSON.parse(body.body.toString('utf8'));
    } catch {
      if (res.destroyed) return;
      return this.refuse(res, 400, -32700, 'Parse error: Invalid JSON');
    }
    if (Array.isArray(raw) && raw.length > MAX_BATCH_SIZE)
      return this.refuse(
        res,
        400,
        -32600,
        `Invalid Request: Batch must not exceed ${MAX_BATCH_SIZE} messages`,
      );
    let messages: JSONRPCMessage[];
    try {
      messages = (Array.isArray(raw) ? raw : [raw]).map((m) => JSONRPCMessageSchema.parse(m));
    } catch {
      return this.refuse(res, 400, -32700, 'Parse error: Invalid JSON-RPC message');
    }
    if (this.closed) return jsonError(res, 404, -32001, SESSION_GONE);

    const initialize = messages.find(
      (m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m),
    );
    if (initialize) {
      if (this.initialized)
        return this.refuse(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1)
        return this.refuse(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.options.newSessionId();
      this.initialized = true;
      this.initializeId = (initialize as { id: RequestId }).id;
      this.options.onsessioninitialized?.(this.sessionId);
    } else if (!this.validSession(req, res) || !this.validProtocolVersion(req, res)) return;

    const requests = messages.filter(isRequest) as Array<JSONRPCMessage & { id: RequestId }>;
    if (requests.length === 0) {
      // v2's MessageExtraInfo carries a web Request, which this transport never builds; no handler reads it.
      for (const message of messages) this.onmessage?.(message, {});
      res.writeHead(202).end();
      return;
    }
    // Ids may not be reused within a session while in flight: the response would have two homes.
    const ids = new Set<RequestId>();
    for (const { id } of requests) {
      if (ids.has(id) || this.answers.has(id))
        return this.refuse(
          res,
          400,
          -32600,
          `Invalid Request: request id ${JSON.stringify(id)} is already in flight in this session; use a new id`,
        );
      ids.add(id);
    }
    // Before the initialize response the session has no revision yet: the one asked for decides.
    const asked = (initialize as { params?: { protocolVersion?: unknown } } | undefined)?.params
      ?.protocolVersion;
    const primed = takesPriming(initialize ? asked : this.protocolVersion);
    const answer: Answer = {
      stream: this.openStream(res, primed),
      ids: requests.map((r) => r.id),
      unanswered: requests.length,
    };
    for (const id of answer.ids) this.answers.set(id, answer);
    const trace = checkedTraceparent(req.headers.traceparent);
    const extra: MessageExtraInfo = {
      // A handler may end the stream early (a long call: the client comes back with Last-Event-ID);
      // offered only to clients that were primed, which know to come back.
      ...(primed ? { closeSSEStream: () => this.closeStream(answer.stream) } : {}),
      // A W3C traceparent header reaches the handlers as the request's only header (the endpoint
      // takes it when the message's `_meta` has none); no Request is built without one.
      ...(trace ? { request: new Request('http://localhost/mcp', { headers: { traceparent: trace } }) } : {}),
    };
    for (const message of messages) this.onmessage?.(message, extra);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (!req.headers.accept?.includes('text/event-stream')) {
      this.refuse(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
      return;
    }
    if (!this.validSession(req, res) || !this.validProtocolVersion(req, res)) return;
    const lastEventId = req.headers['last-event-id'];
    if (typeof lastEventId === 'string' && lastEventId !== '') {
      this.resume(res, lastEventId);
      return;
    }
    if (this.standalone?.res) {
      this.refuse(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
      return;
    }
    // A GET without Last-Event-ID starts afresh: what the previous one left unread is let go.
    if (this.standalone) this.replay.release(this.standalone);
    this.standalone = this.openStream(res, takesPriming(this.protocolVersion));
  }

  /** Sends a stream's head at once (and the priming event), and watches its connection. */
  private openStream(res: ServerResponse, primed: boolean): SseStream {
    const stream = this.replay.open(res);
    res.writeHead(200, this.sseHeaders());
    // The head rides on the priming event's write; without one it goes alone.
    if (primed) res.write(this.replay.priming(stream, RETRY_MS));
    else res.flushHeaders();
    this.watch(stream, res);
    return stream;
  }

  /**
   * A client back after a broken connection: the events of that stream after Last-Event-ID, then
   * the stream carries on here. Only this session's streams are found; a stream whose events
   * after the id were dropped is refused whole.
   */
  private resume(res: ServerResponse, lastEventId: string): void {
    const found = this.replay.resume(lastEventId);
    if ('status' in found) {
      this.refuse(res, found.status, -32000, found.message);
      return;
    }
    const { stream, frames } = found;
    // The client came back, so the connection still attached (if any) is one it gave up on.
    const stale = stream.res;
    stream.res = res;
    stale?.end();
    res.writeHead(200, this.sseHeaders());
    this.watch(stream, res);
    const missed = frames.join('');
    if (stream.done) this.end(stream, res, missed);
    else if (missed) this.write(stream, res, missed);
    else res.flushHeaders();
  }

  /** Detaches a connection that closed from its stream; a stream delivered in full is let go. */
  private watch(stream: SseStream, res: ServerResponse): void {
    res.once('close', () => {
      if (stream.res !== res) return; // a resume took the stream over
      stream.res = undefined;
      if (!stream.done) return;
      // Ended after its last event: handed to the system, delivered but for a connection that
      // broke as it went (the server may learn that late), so it is let go a keep-alive tick or
      // two later. Else the client went away: its events stay for a resume (the calls run on; a
      // disconnect is not a cancel, as the spec reads it).
      if (stream.kept.length === 0) this.replay.release(stream);
      else if (res.writableFinished) this.delivered.add(stream);
    });
  }

  private sseHeaders(): Record<string, string> {
    return this.sessionId ? { ...SSE_HEADERS, 'mcp-session-id': this.sessionId } : { ...SSE_HEADERS };
  }

  private async delete(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!this.validSession(req, res) || !this.validProtocolVersion(req, res)) return;
    res.writeHead(200).end();
    await this.close();
  }

  private validSession(req: IncomingMessage, res: ServerResponse): boolean {
    if (!this.initialized) {
      this.refuse(res, 400, -32000, 'Bad Request: Server not initialized');
      return false;
    }
    const id = req.headers['mcp-session-id'];
    if (!id) {
      this.refuse(res, 400, -32000, 'Bad Request: Mcp-Session-Id header is required');
      return false;
    }
    if (id !== this.sessionId) {
      this.refuse(res, 404, -32001, SESSION_GONE);
      return false;
    }
    return true;
  }

  private validProtocolVersion(req: IncomingMessage, res: ServerResponse): boolean {
    const version = req.headers['mcp-protocol-version'];
    if (version === undefined || SUPPORTED_PROTOCOL_VERSIONS.includes(version as string)) return true;
    this.refuse(
      res,
      400,
      -32000,
      `Bad Request: Unsupported protocol version: ${String(version)} (supported versions: ${SUPPORTED_PROTOCOL_VERSIONS.join(', ')})`,
    );
    return false;
  }

  private refuse(res: ServerResponse, status: number, code: number, message: string): void {
    this.onerror?.(new GatewayError('HTTP_REFUSED', message));
    jsonError(res, status, code, message);
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    const response = isResponse(message);
    const requestId = response ? (message as { id: RequestId }).id : options?.relatedRequestId;
    if (requestId === undefined) {
      if (response)
        throw new GatewayError(
          'TRANSPORT_MISUSE',
          'Cannot send a response on a standalone SSE stream unless resuming a previous client request',
        );
      // No GET stream ever opened: the SDK drops such a message too (the client reads it on its next GET).
      if (this.standalone) this.emit(this.standalone, message, false);
      return;
    }
    const answer = this.answers.get(requestId);
    if (!answer) {
      if (this.closed) return;
      throw new GatewayError(
        'TRANSPORT_MISUSE',
        `No connection established for request ID: ${String(requestId)}`,
      );
    }
    if (!response) {
      this.emit(answer.stream, message, false);
      return;
    }
    if (requestId === this.initializeId) {
      this.initializeId = undefined;
      const version = (message as { result?: { protocolVersion?: unknown } }).result?.protocolVersion;
      if (typeof version === 'string') this.protocolVersion = version;
    }
    answer.unanswered -= 1;
    const last = answer.unanswered === 0;
    if (last) for (const id of answer.ids) this.answers.delete(id);
    this.emit(answer.stream, message, last);
  }

  /** Numbers and keeps a message, and writes it to its stream's connection if one is open. */
  private emit(stream: SseStream, message: JSONRPCMessage, last: boolean): void {
    const frame = this.replay.record(stream, JSON.stringify(message));
    if (last) stream.done = true;
    const res = stream.res;
    if (res) last ? this.end(stream, res, frame) : this.write(stream, res, frame);
    // Nobody listening and nothing kept (its one event was too large to keep): nothing to resume.
    else if (last && stream.kept.length === 0) this.replay.release(stream);
  }

  /** Writes to a connection; a client that stops reading while MAX_UNSENT_BYTES pile up loses it. */
  private write(stream: SseStream, res: ServerResponse, text: string): void {
    if (res.destroyed || res.writableEnded) return;
    if (this.overflows(res, text)) this.drop(stream, res);
    else res.write(text);
  }

  private end(stream: SseStream, res: ServerResponse, text: string): void {
    if (res.destroyed || res.writableEnded) return;
    if (this.overflows(res, text)) this.drop(stream, res);
    else res.end(text);
  }

  private overflows(res: ServerResponse, text: string): boolean {
    return res.writableLength + text.length > (this.options.maxUnsentBytes ?? MAX_UNSENT_BYTES);
  }

  /** The connection goes; the stream's events stay in the replay buffer (within its bounds). */
  private drop(stream: SseStream, res: ServerResponse): void {
    this.onerror?.(
      new GatewayError(
        'STREAM_DROPPED',
        'an SSE stream was dropped: its client read nothing while its buffer filled',
      ),
    );
    if (stream.res === res) stream.res = undefined;
    res.destroy();
  }

  /**
   * Ends a stream's connection before its last event, politely: the client, primed with an id and
   * `retry`, comes back with Last-Event-ID and gets the rest.
   */
  closeStream(stream: SseStream): void {
    const res = stream.res;
    if (!res || stream.done) return;
    stream.res = undefined;
    res.end();
  }

  /** Streams with a connection open. */
  private *open(): Generator<[SseStream, ServerResponse]> {
    const seen = new Set<SseStream>();
    for (const { stream } of this.answers.values()) {
      if (seen.has(stream) || !stream.res) continue;
      seen.add(stream);
      yield [stream, stream.res];
    }
    if (this.standalone?.res) yield [this.standalone, this.standalone.res];
  }

  private tick(): void {
    for (const [stream, res] of this.open()) this.write(stream, res, ': keepalive\n\n');
    for (const stream of this.deliveredBefore) if (!stream.res) this.replay.release(stream);
    this.deliveredBefore = this.delivered;
    this.delivered = new Set();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    // Like the SDK's close: a stream still waiting ends without its answer (a primed client that
    // comes back for it learns the session is gone).
    for (const [stream, res] of [...this.open()]) {
      stream.res = undefined;
      res.end();
    }
    this.answers.clear();
    this.standalone = undefined;
    this.delivered.clear();
    this.deliveredBefore.clear();
    this.replay.clear();
    this.onclose?.();
  }
}
