import type { ServerConfig } from '../config/servers.js';
import type { AuditSink } from '../ports/audit.js';
import type { PolicyView } from '../ports/policy.js';
import type { ServerRequest, ServerRequestMethod } from '../ports/upstream.js';
import { clip } from '../text/render.js';
import { elicitationParams, ServerRequestRefused, samplingParams } from './server-request-params.js';

export { ServerRequestRefused };

export type ServerRequestKind = 'sampling' | 'elicitation';

const KIND: Record<ServerRequestMethod, ServerRequestKind> = {
  'sampling/createMessage': 'sampling',
  'elicitation/create': 'elicitation',
};

/** Largest request a server may send to the client, as JSON (its params). */
export const SERVER_REQUEST_MAX_BYTES = 256 * 1024;
/**
 * Largest request as the client would receive it: labels on every line and escapes make a
 * request larger (a line break gains a label of ~40 bytes), so what is passed on is capped too.
 */
export const SERVER_REQUEST_SHOWN_MAX_BYTES = 1024 * 1024;
/** Largest answer passed back to the server, as JSON. */
export const SERVER_ANSWER_MAX_BYTES = 256 * 1024;

/**
 * How long a request passed on may wait for the client: a person may be reading it. The server's
 * cancel, or its call ending, ends it sooner.
 */
export const SERVER_REQUEST_TIMEOUT_MS = 10 * 60_000;

/**
 * One client session as a destination of server requests: the endpoint that serves it. Only a
 * session with a call in flight to the server can be one (see `ServerRequests.busy`).
 */
export interface RequestSink {
  readonly agent?: string;
  readonly scope?: string;
  /** Whether this client declared the capability (sampling, or form elicitation). */
  capable(kind: ServerRequestKind): boolean;
  /**
   * Send the request to this client, related to its request in flight to `server` (on --http, on
   * that request's stream), and resolve with its answer, type-checked.
   */
  forward(
    server: string,
    method: ServerRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>>;
}

const jsonSize = (value: unknown): number => {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '');
  } catch {
    return Number.POSITIVE_INFINITY;
  }
};

/**
 * The signal a request passed on to the client is cancelled by: the server's cancel, with the
 * gateway's words as its reason. A server's `notifications/cancelled` carries a reason of its own
 * choosing, the SDK aborts the request's signal with it, and the SDK's `request` copies whatever
 * reason aborted its signal into the `notifications/cancelled` it sends the client: the server's
 * text would reach the client (and a person, if the client shows why a form closed) raw and
 * unattributed. So the client is told only which server cancelled what. (The SDK aborts the
 * signal without a reason when the server's connection closes: the same words then.)
 */
export function serverCancel(signal: AbortSignal, server: string, method: ServerRequestMethod): AbortSignal {
  const controller = new AbortController();
  const reason = `ringfence: ${server} cancelled its ${method} request (or its connection closed)`;
  if (signal.aborted) controller.abort(reason);
  else signal.addEventListener('abort', () => controller.abort(reason), { once: true });
  return controller.signal;
}

/**
 * The entry an upstream is built from: sampling and elicitation declared to the server only where
 * the registration and the policy both allow them. Each request is decided again anyway.
 */
export function declaredEntry(config: ServerConfig, policy: PolicyView): ServerConfig {
  return {
    ...config,
    allow_sampling: config.allow_sampling === true && policy.allowsServerRequest(config.name, 'sampling'),
    allow_elicitation:
      config.allow_elicitation === true && policy.allowsServerRequest(config.name, 'elicitation'),
  };
}

const HOW_TO_ALLOW: Record<ServerRequestKind, string> = {
  sampling: '--allow-sampling',
  elicitation: '--allow-elicitation',
};

/**
 * Sampling and elicitation from servers: each request decided (registration, then the policy,
 * then whose call it belongs to and whether that client can answer), audited by digest both ways,
 * and passed to exactly one client session: the one whose call to this server is in flight, or
 * on HTTP the one whose call's own answer stream carried the request (`ServerRequest.owner`).
 * Otherwise a request while no session, or more than one, waits on the server is refused: the
 * gateway cannot tell whose call asked, and a guess could show one agent's server text to another.
 */
export class ServerRequests {
  private readonly waiting = new Map<string, Map<RequestSink, number>>();

  constructor(
    private readonly deps: {
      readonly audit: AuditSink;
      readonly policy: PolicyView;
      readonly policyRef: () => Record<string, unknown>;
    },
  ) {}

  /** `sink` has a request in flight to `server` until the returned function is called. */
  busy(server: string, sink: RequestSink): () => void {
    const sinks = this.waiting.get(server) ?? new Map<RequestSink, number>();
    this.waiting.set(server, sinks);
    sinks.set(sink, (sinks.get(sink) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (sinks.get(sink) ?? 1) - 1;
      if (left > 0) sinks.set(sink, left);
      else sinks.delete(sink);
      if (sinks.size === 0) this.waiting.delete(server);
    };
  }

  async handle(config: ServerConfig, request: ServerRequest): Promise<Record<string, unknown>> {
    const server = config.name;
    const { method } = request;
    const waiting = [...(this.waiting.get(server)?.keys() ?? [])];
    // A request that came on one call's own answer stream (HTTP) is that call's: its owner is the
    // one destination, whoever else calls the server meanwhile, if that call is still in flight.
    // Anything else is decided over every waiting session (more than one: refused).
    const owned = waiting.find((sink) => sink === request.owner);
    const sinks = owned ? [owned] : waiting;
    const { forwarded, parentSeq } = await this.admit(config, method, request.params, sinks);
    const sink = sinks[0]!;
    let answer: Record<string, unknown>;
    try {
      answer = await sink.forward(server, method, forwarded, serverCancel(request.signal, server, method));
    } catch (error) {
      // The server's cancel is the gateway's words here too: its reason is never the client's error.
      // Else as it came, cut: the audit log keeps reasons unrendered, and `audit tail` renders them once.
      const reason = request.signal.aborted
        ? `${server} cancelled its request (or its connection closed) before the client answered`
        : `the client answered with an error: ${clip(String((error as Error).message ?? error), 300)}`;
      return this.settle(config, method, sink, parentSeq, { error: reason });
    }
    return this.settle(config, method, sink, parentSeq, { answer });
  }

  /**
   * A request from `config`'s server decided for `sinks` (those whose call to it is in flight;
   * it is passed on only when there is exactly one) and audited either way: the params to pass
   * on and the seq of the `mcp.server_request` entry, or a `ServerRequestRefused` for the server.
   * With MCP 2026-07-28 the request comes inside the call's own result, so its one sink is known.
   */
  async admit(
    config: ServerConfig,
    method: ServerRequestMethod,
    params: unknown,
    sinks: readonly RequestSink[],
  ): Promise<{ forwarded: Record<string, unknown>; parentSeq: number }> {
    const server = config.name;
    const only = sinks.length === 1 ? sinks[0] : undefined;
    const actor = only ? { agent: only.agent, scope: only.scope } : {};
    let forwarded: Record<string, unknown>;
    try {
      forwarded = this.decide(config, KIND[method], params, sinks);
    } catch (error) {
      if (!(error instanceof ServerRequestRefused)) throw error;
      await this.deps.audit.append({
        type: 'mcp.server_request',
        ...actor,
        refs: {
          server,
          method,
          allowed: false,
          rule: error.rule,
          reason: error.message,
          request: params,
          ...this.deps.policyRef(),
        },
      });
      throw new ServerRequestRefused(
        error.rule,
        `ringfence refused ${method} from ${server}: ${error.message}`,
      );
    }
    const parentSeq = await this.deps.audit.append({
      type: 'mcp.server_request',
      ...actor,
      refs: { server, method, allowed: true, rule: 'allowed', request: params, ...this.deps.policyRef() },
    });
    return { forwarded, parentSeq };
  }

  /**
   * The client's answer to an admitted request (or why there is none), audited against its
   * request entry: the answer to pass back to the server, or a `ServerRequestRefused`.
   */
  async settle(
    config: ServerConfig,
    method: ServerRequestMethod,
    sink: Pick<RequestSink, 'agent' | 'scope'>,
    parentSeq: number,
    outcome: { answer: Record<string, unknown> } | { error: string },
  ): Promise<Record<string, unknown>> {
    const server = config.name;
    const actor = { agent: sink.agent, scope: sink.scope };
    const answered = (answer: unknown, reason?: string) =>
      this.deps.audit
        .append({
          type: 'mcp.server_answer',
          ...actor,
          parentSeq,
          refs: { server, method, is_error: reason !== undefined, answer, ...(reason ? { reason } : {}) },
        })
        .catch(() => {});
    if ('error' in outcome) {
      await answered(undefined, outcome.error);
      throw new ServerRequestRefused('client-error', `${method} failed: ${outcome.error}`);
    }
    const { answer } = outcome;
    if (jsonSize(answer) > SERVER_ANSWER_MAX_BYTES) {
      const reason = `the client's answer is larger than ${SERVER_ANSWER_MAX_BYTES} bytes`;
      await answered(answer, reason);
      throw new ServerRequestRefused('too-large', `ringfence withheld the answer to ${method}: ${reason}`);
    }
    await answered(answer);
    return answer;
  }

  /** The params to pass on, or a `ServerRequestRefused` saying why not. */
  private decide(
    config: ServerConfig,
    kind: ServerRequestKind,
    params: unknown,
    sinks: readonly RequestSink[],
  ): Record<string, unknown> {
    const server = config.name;
    const registered = kind === 'sampling' ? config.allow_sampling : config.allow_elicitation;
    if (registered !== true)
      throw new ServerRequestRefused(
        'registration',
        `${server} is not registered to use ${kind}. If you trust it to, register it again with ${HOW_TO_ALLOW[kind]} (ringfence mcp rm ${server}, then ringfence mcp add ${server} … ${HOW_TO_ALLOW[kind]})`,
      );
    if (!this.deps.policy.allowsServerRequest(server, kind))
      throw new ServerRequestRefused(
        'policy',
        `the organisation policy does not allow ${server} to use ${kind} (mcp[].allow_${kind} is not true for it). Ask your policy admin; ringfence doctor names the policy in force`,
      );
    const size = jsonSize(params);
    if (size > SERVER_REQUEST_MAX_BYTES)
      throw new ServerRequestRefused(
        'too-large',
        `the request is ${Number.isFinite(size) ? `${size} bytes` : 'not JSON'}, more than the ${SERVER_REQUEST_MAX_BYTES} passed on`,
      );
    const forwarded =
      kind === 'sampling' ? samplingParams(server, params) : elicitationParams(server, params);
    const shown = jsonSize(forwarded);
    if (shown > SERVER_REQUEST_SHOWN_MAX_BYTES)
      throw new ServerRequestRefused(
        'too-large',
        `with its labels and escapes the request would reach the client as ${shown} bytes, more than the ${SERVER_REQUEST_SHOWN_MAX_BYTES} passed on; the server can send fewer lines or fewer hidden characters`,
      );
    if (sinks.length === 0)
      throw new ServerRequestRefused(
        'no-caller',
        `no client has a call to ${server} in progress; a server may ask only while it answers a call`,
      );
    if (sinks.length > 1)
      throw new ServerRequestRefused(
        'several-callers',
        `calls from ${sinks.length} client sessions to ${server} are in progress, so ringfence cannot tell whose call asked; try again when only one session calls ${server}`,
      );
    if (!sinks[0]!.capable(kind))
      throw new ServerRequestRefused(
        'client-capability',
        `the client whose call is in progress did not declare the ${kind} capability`,
      );
    return forwarded;
  }
}
