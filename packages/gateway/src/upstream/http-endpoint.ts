import {
  type ClientRequest,
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingMessage,
  type OutgoingHttpHeaders,
  type RequestOptions,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { type JSONRPCMessage, SdkErrorCode, SdkHttpError } from '@modelcontextprotocol/client';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { GatewayError } from '../errors.js';
import { UpstreamError } from '../ports/errors.js';
import { redactText, redactUrl } from '../text/redact.js';
import { readBoundedBody } from '../util/bounded-body.js';
import { describeNetworkError, type EventStreamParser, tooLarge } from './answer-stream.js';

// The HTTP side of HttpClientTransport: one server's connections (keep-alive, TLS, no redirects),
// its answers read under a cap, event streams fed to the parser, and network failures as people
// read them.

/** Errors of a connection that was never made (as against one that broke). */
const UNREACHABLE = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);

/** OpenSSL's and Node's codes for a certificate that does not verify. */
const TLS_REFUSED = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|ERR_TLS_/;

/** Idle keep-alive connections are dropped after this (lowered by the server's Keep-Alive hint). */
const IDLE_SOCKET_MS = 4_000;

/** What is read of an error answer's body, for its message. */
const ERROR_TEXT_BYTES = 4096;

/** A status the transport does not take as an answer; 404 to a request with a session id = session expired. */
/**
 * A refusal by HTTP status. It is the SDK's `SdkHttpError` with `{ status, statusText, text }` on
 * purpose: that is the one shape the SDK's era probe reads as "an answer" (a 2025 server refusing
 * a session-less `server/discover` with 400 is legacy, a 5xx is an outage); any other rejection
 * it takes for a network failure and refuses to connect.
 */
export class HttpStatusError extends SdkHttpError {
  constructor(
    status: number,
    message: string,
    /** The answer's body (at most 4 KiB), for the probe to read a JSON-RPC error from. */
    text = '',
    statusText = '',
  ) {
    super(SdkErrorCode.ClientHttpNotImplemented, message, { status, statusText, text });
    this.name = 'HttpStatusError';
  }
}

export function mediaType(res: IncomingMessage): string {
  return (res.headers['content-type'] ?? '').split(';')[0]!.trim().toLowerCase();
}

export const ok = (res: IncomingMessage) => (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;

/** Read and drop a body we have no use for, keeping the connection for the next request. */
export function discard(res: IncomingMessage): void {
  let seen = 0;
  res.on('error', () => {});
  res.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > ERROR_TEXT_BYTES) res.destroy();
  });
}

/** The whole answer, refused over `max` bytes (declared or counted) and failed if the connection drops. */
export async function readBody(res: IncomingMessage, max: number): Promise<Buffer> {
  const read = await readBoundedBody(res, max).catch((error: unknown) => {
    throw dropped(error);
  });
  if (!read.tooLarge) return read.body;
  res.destroy();
  throw read.declared === undefined
    ? tooLarge(max)
    : new UpstreamError(
        'UPSTREAM_ANSWER_TOO_LARGE',
        `the server's answer is ${read.declared} bytes, over the ${max}-byte cap`,
      );
}

/** Up to ERROR_TEXT_BYTES of an error answer, for its message. */
export async function errorText(res: IncomingMessage): Promise<string> {
  return shortened(await errorBody(res));
}

/** The body of a refusal, at most 4 KiB of it (empty if it cannot be read). */
export function errorBody(res: IncomingMessage): Promise<string> {
  return readBody(res, ERROR_TEXT_BYTES).then(
    (body) => body.toString('utf8'),
    () => '',
  );
}

/** A refusal's body as a message quotes it. */
export function shortened(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}

export function lost(error: unknown): UpstreamError {
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

export function dropped(error: unknown): UpstreamError {
  return new UpstreamError(
    'UPSTREAM_LOST',
    `the connection to the server dropped (${describeNetworkError(error ?? new GatewayError('CLOSED_EARLY', 'closed'))}) before it answered; the call was ended`,
    { cause: error },
  );
}

/** The JSON-RPC messages of a JSON answer (one, or a batch), each checked against the SDK's schema. */
export function jsonMessages(body: Buffer): JSONRPCMessage[] {
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
  return messages;
}

/**
 * Read an event stream to its end, which `onEnd` learns of: clean, or with the problem (the
 * connection dropped, garbage, a cap exceeded — the stream is then dropped too).
 */
export function readEventStream(
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

const closedError = () => new UpstreamError('UPSTREAM_CLOSED', 'the connection to the server is closed');

/**
 * One server's connections: a keep-alive agent (TLS verified against Node's CA store and
 * NODE_EXTRA_CA_CERTS unless `ca` is given), requests that never follow a redirect, and the
 * requests still open, which `close` ends at once.
 */
export class HttpEndpoint {
  private readonly agent: HttpAgent;
  private readonly request: typeof httpRequest;
  private readonly target: RequestOptions;
  private readonly open = new Set<ClientRequest>();
  private closed = false;
  private readonly url: URL;

  constructor(
    url: URL,
    ca?: string | Buffer,
    /** The server's registered name, for the command a redirect refusal names. */
    private readonly server = 'NAME',
  ) {
    this.url = url;
    const https = url.protocol === 'https:';
    this.request = https ? httpsRequest : httpRequest;
    this.agent = https
      ? new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS, ...(ca ? { ca } : {}) })
      : new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS });
    this.target = {
      protocol: url.protocol,
      hostname: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || (https ? 443 : 80),
      path: `${url.pathname}${url.search}`,
      agent: this.agent,
    };
  }

  /**
   * A redirect is not followed (it could bounce our requests and their headers elsewhere): the
   * refusal names where it pointed and, when that is a URL, how to register the server there.
   */
  private redirectRefusal(status: number, location: string | undefined): string {
    // A redirect may carry a token (an SSO code, a signed URL): shown through the redactor.
    const said = `the server answered ${status} (redirect to ${redactText((location ?? 'no location').slice(0, 200))}); redirects are not followed`;
    let target: URL | undefined;
    try {
      target = location === undefined ? undefined : new URL(location, this.url);
    } catch {}
    if (!target || (target.protocol !== 'https:' && target.protocol !== 'http:')) return said;
    const shown = redactUrl(target.href).slice(0, 200);
    return `${said}. If the server has moved there, register it at that address: ringfence mcp rm ${this.server}, then ringfence mcp add ${this.server} --url ${shown} (with the same --header options)`;
  }

  /** One request; resolves with the answer's head, refusing a redirect. */
  exchange(
    method: string,
    headers: OutgoingHttpHeaders,
    body?: string,
    /** Aborting it ends the exchange at once, before or after the answer's head came. */
    signal?: AbortSignal,
  ): Promise<IncomingMessage> {
    if (this.closed) return Promise.reject(closedError());
    return new Promise((resolve, reject) => {
      let req: ClientRequest;
      try {
        req = this.request({ ...this.target, method, headers });
      } catch (error) {
        reject(error);
        return;
      }
      this.open.add(req);
      if (signal) {
        const abort = () => {
          req.destroy();
          reject(new UpstreamError('CALL_CANCELLED', 'the request was cancelled'));
        };
        if (signal.aborted) abort();
        else {
          signal.addEventListener('abort', abort, { once: true });
          req.once('close', () => signal.removeEventListener('abort', abort));
        }
      }
      req.once('close', () => this.open.delete(req));
      req.on('error', (error) => reject(this.closed ? closedError() : lost(error)));
      req.once('response', (res) => {
        const status = res.statusCode ?? 0;
        if (status >= 300 && status < 400) {
          res.destroy();
          reject(new UpstreamError('UPSTREAM_REDIRECT', this.redirectRefusal(status, res.headers.location)));
          return;
        }
        resolve(res);
      });
      req.end(body);
    });
  }

  close(): void {
    this.closed = true;
    for (const req of this.open) req.destroy();
    this.agent.destroy();
  }
}
