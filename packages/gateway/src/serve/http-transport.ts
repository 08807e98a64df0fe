/**
 * One `mcp serve --http` session as an SDK `Transport`, on plain `node:http`. It replaces the
 * SDK's StreamableHTTPServerTransport, which turns every Node request into web Request/Response
 * objects (through @hono/node-server) and writes every answer through web streams, headers, event
 * and end each on their own. The protocol it speaks is the SDK's, case by case: the same statuses,
 * JSON-RPC codes and messages for 400/404/405/406/409/413/415, one initialisation per session,
 * batches of at most 100, notifications and responses answered 202.
 *
 * What differs is when an answer's bytes go out. Its SSE headers wait for its first message: a
 * call answered with nothing before its result goes out as one write (headers, the one event,
 * with a content-length), where the SDK sent the headers at once and the event and the stream's
 * end after, each through web streams. A stream still open after KEEPALIVE_MS gets its headers
 * and a comment, so a long call keeps its connection as before. (Answering with one JSON body
 * instead, which the spec also allows, saves the SDK client about a third of its CPU per call,
 * but the conformance suite counts "SSE streams functional" only for a server that streams:
 * docs/performance.md.)
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
import { readBoundedBody } from '../util/bounded-body.js';

/** The SDK's default cap on a request body (4 MiB): a bigger one is refused with 413. */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;
/** The SDK's cap on the messages of one JSON-RPC batch. */
export const MAX_BATCH_SIZE = 100;
/** Bytes one answer stream may hold unsent for a client that does not read: past it, the stream is dropped. */
export const MAX_UNSENT_BYTES = 16 * 1024 * 1024;
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
  readonly res: ServerResponse;
  /** The requests it carries. */
  readonly ids: RequestId[];
  /** Of those, the ones whose response has not been sent. */
  unanswered: number;
  /** Headers sent (else nothing has been written yet). */
  sse: boolean;
  /** The client went away, or the stream was dropped: later messages for it are discarded. */
  gone: boolean;
}

const isResponse = (m: JSONRPCMessage): boolean => 'result' in m || 'error' in m;
const isRequest = (m: JSONRPCMessage): boolean => 'method' in m && 'id' in m;
const sseEvent = (message: JSONRPCMessage): string => `event: message\ndata: ${JSON.stringify(message)}\n\n`;

/**
 * Ends a response whose length is declared with its whole body. `res.end(text)` corks the socket
 * and queues an empty chunk after the text, so such an answer left as a two-buffer `writev`; a
 * plain `write` then `end()` leaves as one `write` (the unsent headers ride on it). Not for a
 * chunked stream: there `end(text)` puts the last chunk and the terminator in one write.
 */
function endWith(res: ServerResponse, text: string): void {
  res.write(text);
  res.end();
}

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
  /** Where the response to each request in flight goes. */
  private readonly answers = new Map<RequestId, Answer>();
  /** The session's GET stream: server messages that belong to no request (list_changed…). */
  private standalone: ServerResponse | undefined;
  private keepalive: NodeJS.Timeout | undefined;

  constructor(
    private readonly options: {
      newSessionId: () => string;
      onsessioninitialized?: (id: string) => void;
      maxBodyBytes?: number;
      maxUnsentBytes?: number;
    },
  ) {}

  /** Requests whose response has not been sent yet (their answer may be gone). */
  pending(): number {
    return this.answers.size;
  }

  async start(): Promise<void> {
    // One timer for every stream of the session, rather than one per call.
    this.keepalive = setInterval(() => this.tick(), KEEPALIVE_MS);
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

    const initializing = messages.some(
      (m) => 'method' in m && m.method === 'initialize' && isInitializeRequest(m),
    );
    if (initializing) {
      if (this.initialized)
        return this.refuse(res, 400, -32600, 'Invalid Request: Server already initialized');
      if (messages.length > 1)
        return this.refuse(res, 400, -32600, 'Invalid Request: Only one initialization request is allowed');
      this.sessionId = this.options.newSessionId();
      this.initialized = true;
      this.options.onsessioninitialized?.(this.sessionId);
    } else if (!this.validSession(req, res) || !this.validProtocolVersion(req, res)) return;

    // v2's MessageExtraInfo carries a web Request, which this transport never builds; no handler reads it.
    const extra: MessageExtraInfo = {};
    const requests = messages.filter(isRequest) as Array<JSONRPCMessage & { id: RequestId }>;
    if (requests.length === 0) {
      for (const message of messages) this.onmessage?.(message, extra);
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
    const answer: Answer = {
      res,
      ids: requests.map((r) => r.id),
      unanswered: requests.length,
      sse: false,
      gone: false,
    };
    for (const id of answer.ids) this.answers.set(id, answer);
    res.once('close', () => {
      // The client went away before its answer: the calls run on (a disconnect is not a cancel,
      // as the spec reads it) and their audit entries are written; what they send is dropped.
      if (!res.writableFinished) answer.gone = true;
    });
    for (const message of messages) this.onmessage?.(message, extra);
  }

  private get(req: IncomingMessage, res: ServerResponse): void {
    if (!req.headers.accept?.includes('text/event-stream')) {
      this.refuse(res, 406, -32000, 'Not Acceptable: Client must accept text/event-stream');
      return;
    }
    if (!this.validSession(req, res) || !this.validProtocolVersion(req, res)) return;
    if (this.standalone) {
      this.refuse(res, 409, -32000, 'Conflict: Only one SSE stream is allowed per session');
      return;
    }
    this.standalone = res;
    res.writeHead(200, { ...SSE_HEADERS, ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}) });
    res.flushHeaders();
    res.once('close', () => {
      if (this.standalone === res) this.standalone = undefined;
    });
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
      // No GET stream open: the SDK drops such a message too (the client reads it on its next GET).
      if (this.standalone) this.write(this.standalone, sseEvent(message), () => this.standalone?.destroy());
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
      if (answer.gone) return;
      this.openStream(answer);
      this.write(answer.res, sseEvent(message), () => this.drop(answer));
      return;
    }
    answer.unanswered -= 1;
    const complete = answer.unanswered === 0;
    if (complete) for (const id of answer.ids) this.answers.delete(id);
    if (answer.gone || answer.res.destroyed) return;
    const event = sseEvent(message);
    if (!complete) {
      this.openStream(answer);
      this.write(answer.res, event, () => this.drop(answer));
    } else if (answer.sse) answer.res.end(event);
    else {
      // The whole answer at once: headers and the one event in one write, no chunked framing.
      answer.res.writeHead(200, {
        ...SSE_HEADERS,
        'content-length': Buffer.byteLength(event),
        ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}),
      });
      endWith(answer.res, event);
    }
  }

  /** Sends a pending answer's headers: its messages follow as they come. */
  private openStream(answer: Answer): void {
    if (answer.sse) return;
    answer.sse = true;
    answer.res.writeHead(200, {
      ...SSE_HEADERS,
      ...(this.sessionId ? { 'mcp-session-id': this.sessionId } : {}),
    });
  }

  /** Writes to a stream; a client that stops reading while MAX_UNSENT_BYTES pile up loses it. */
  private write(res: ServerResponse, text: string, overflow: () => void): void {
    if (res.destroyed || res.writableEnded) return;
    if (res.writableLength + text.length > (this.options.maxUnsentBytes ?? MAX_UNSENT_BYTES)) {
      this.onerror?.(
        new GatewayError(
          'STREAM_DROPPED',
          'an SSE stream was dropped: its client read nothing while its buffer filled',
        ),
      );
      overflow();
      return;
    }
    res.write(text);
  }

  private drop(answer: Answer): void {
    answer.gone = true;
    answer.res.destroy();
  }

  private tick(): void {
    const seen = new Set<Answer>();
    for (const answer of this.answers.values()) {
      if (answer.gone || seen.has(answer)) continue;
      seen.add(answer);
      this.openStream(answer);
      this.write(answer.res, ': keepalive\n\n', () => this.drop(answer));
    }
    if (this.standalone) this.write(this.standalone, ': keepalive\n\n', () => this.standalone?.destroy());
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    for (const answer of new Set(this.answers.values())) {
      // Like the SDK's close: a stream still waiting ends without its answer.
      if (!answer.gone && !answer.res.writableEnded) {
        if (!answer.sse && !answer.res.headersSent) this.openStream(answer);
        answer.res.end();
      }
    }
    this.answers.clear();
    this.standalone?.end();
    this.standalone = undefined;
    this.onclose?.();
  }
}
