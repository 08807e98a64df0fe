import { randomBytes } from 'node:crypto';
import { RingfenceError } from '@ringfence/policy';
import type { ServerRequestMethod } from '../../ports/upstream.js';
import { type RequestSink, SERVER_REQUEST_TIMEOUT_MS, type ServerRequestKind } from '../server-requests.js';
import { checkedAnswer } from './answers.js';
import { type Principal, principalKey } from './sealed-state.js';

/**
 * A 2025 server asks (sampling, elicitation) in the middle of a call; a 2026-07-28 client can only
 * be asked by an `input_required` result, answered by calling again. So the call is held open:
 * the server's request waits here, parked, while the client gets `input_required`, and the
 * client's retry answers it and picks the same call up. A held call is a continuation: one
 * principal's, usable once per round (its id is sealed into the round's requestState), bounded
 * in number, and dropped when nobody comes back in time (the server's requests are refused and
 * the call is cancelled, each audited by the usual path).
 */

/** How long a held call waits for the client to come back: as long as a request waits today. */
export const CONTINUATION_TTL_MS = SERVER_REQUEST_TIMEOUT_MS;
/** Calls one principal may have held at once. */
export const CONTINUATIONS_PER_PRINCIPAL = 16;
/** Calls held at once in this process. */
export const CONTINUATIONS_MAX = 1024;

export type ContinuationErrorCode =
  /** No held call by that id for this principal (answered already, given up, or another's). */
  | 'CONTINUATION_UNKNOWN'
  /** Too many calls held: this one is given up. */
  | 'CONTINUATIONS_FULL'
  /** A held request was not answered: the server's cancel, no answer, a malformed one, or nobody came back. */
  | 'NOT_ANSWERED';

/** Local errors of held calls; the endpoint turns them into what the client gets. */
export class ContinuationError extends RingfenceError<ContinuationErrorCode> {}

/** One request a server sent, as the client will see it (already decided and rendered). */
export interface ParkedRequest {
  readonly method: ServerRequestMethod;
  readonly params: Record<string, unknown>;
}

interface Waiting extends ParkedRequest {
  resolve(answer: Record<string, unknown>): void;
  reject(error: Error): void;
}

/**
 * The `RequestSink` of a 2026 client's call: `ServerRequests` decides and audits the server's
 * request as for any client, then hands it here, where it waits for the client's next round.
 */
export class ParkingSink implements RequestSink {
  readonly agent?: string;
  readonly scope?: string;
  private waiting: Waiting[] = [];
  private wake?: () => void;

  constructor(
    principal: Principal,
    readonly capable: (kind: ServerRequestKind) => boolean,
  ) {
    if (principal.agent) this.agent = principal.agent;
    if (principal.scope) this.scope = principal.scope;
  }

  forward(
    _server: string,
    method: ServerRequestMethod,
    params: Record<string, unknown>,
    signal: AbortSignal,
  ): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      if (signal.aborted) return reject(new ContinuationError('NOT_ANSWERED', String(signal.reason)));
      const entry: Waiting = { method, params, resolve, reject };
      this.waiting.push(entry);
      // The server's cancel: its request is no longer asked (or answered).
      signal.addEventListener(
        'abort',
        () => {
          this.waiting = this.waiting.filter((w) => w !== entry);
          reject(new ContinuationError('NOT_ANSWERED', String(signal.reason)));
        },
        { once: true },
      );
      this.wake?.();
    });
  }

  /** Resolves once a request waits (at once if one does). */
  parked(): Promise<void> {
    if (this.waiting.length > 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.wake = () => {
        this.wake = undefined;
        resolve();
      };
    });
  }

  /** The requests waiting now, taken out: they are this round's. */
  take(): Waiting[] {
    const taken = this.waiting;
    this.waiting = [];
    return taken;
  }
}

/** What one round of a held call comes to: the call's end, or requests for the client. */
export type Round<T> =
  | { readonly kind: 'done'; readonly value: T }
  | { readonly kind: 'input'; readonly id: string; readonly requests: readonly ParkedRequest[] };

interface Held<T> {
  readonly owner: string;
  readonly sink: ParkingSink;
  readonly call: Promise<{ ok: true; value: T } | { ok: false; error: unknown }>;
  readonly controller: AbortController;
  readonly asked: Waiting[];
  timer?: NodeJS.Timeout;
}

export class Continuations {
  private readonly held = new Map<string, Held<unknown>>();

  constructor(
    private readonly limits: { ttlMs: number; perPrincipal: number; max: number } = {
      ttlMs: CONTINUATION_TTL_MS,
      perPrincipal: CONTINUATIONS_PER_PRINCIPAL,
      max: CONTINUATIONS_MAX,
    },
  ) {}

  /**
   * Run `work` (the call, given the sink its server's requests go to and the signal that cancels
   * it) until it ends or its server asks. `clientSignal` is this round's cancel: it cancels the
   * call only while this round waits for it.
   */
  start<T>(
    principal: Principal,
    sink: ParkingSink,
    work: (sink: ParkingSink, signal: AbortSignal) => Promise<T>,
    clientSignal?: AbortSignal,
  ): Promise<Round<T>> {
    const controller = new AbortController();
    const call = work(sink, controller.signal).then(
      (value) => ({ ok: true as const, value }),
      (error: unknown) => ({ ok: false as const, error }),
    );
    const held: Held<T> = { owner: principalKey(principal), sink, call, controller, asked: [] };
    return this.round(held, clientSignal);
  }

  /**
   * The next round of held call `id`, the client's `responses` answering what it was asked
   * (each checked for its kind; an elicitation left unanswered is cancelled, a sampling refused).
   * Taken out on use: a second retry with the same id finds nothing.
   */
  resume<T>(
    id: string,
    principal: Principal,
    responses: Readonly<Record<string, unknown>> | undefined,
    clientSignal?: AbortSignal,
  ): Promise<Round<T>> {
    const held = this.held.get(id) as Held<T> | undefined;
    if (!held || held.owner !== principalKey(principal))
      throw new ContinuationError(
        'CONTINUATION_UNKNOWN',
        'this call is no longer waiting for an answer (answered already, or nobody came back in time); call it again',
      );
    this.release(id, held);
    held.asked.splice(0).forEach((request, index) => {
      const given = responses && Object.hasOwn(responses, `q${index}`) ? responses[`q${index}`] : undefined;
      if (given === undefined) {
        if (request.method === 'elicitation/create') request.resolve({ action: 'cancel' });
        else request.reject(new ContinuationError('NOT_ANSWERED', 'the client sent no answer'));
        return;
      }
      const checked = checkedAnswer(request.method, given);
      if ('answer' in checked) request.resolve(checked.answer);
      else request.reject(new ContinuationError('NOT_ANSWERED', checked.error));
    });
    return this.round(held, clientSignal);
  }

  /** Calls held now (for tests and `doctor`). */
  get size(): number {
    return this.held.size;
  }

  private async round<T>(held: Held<T>, clientSignal?: AbortSignal): Promise<Round<T>> {
    const cancel = () => held.controller.abort(clientSignal?.reason ?? 'the client cancelled its call');
    if (clientSignal?.aborted) cancel();
    clientSignal?.addEventListener('abort', cancel, { once: true });
    let next: { ended: true; outcome: Awaited<Held<T>['call']> } | { ended: false };
    try {
      next = await Promise.race([
        held.call.then((outcome) => ({ ended: true as const, outcome })),
        held.sink.parked().then(() => ({ ended: false as const })),
      ]);
    } finally {
      clientSignal?.removeEventListener('abort', cancel);
    }
    if (next.ended) {
      if (next.outcome.ok) return { kind: 'done', value: next.outcome.value };
      throw next.outcome.error;
    }
    const asked = held.sink.take();
    held.asked.push(...asked);
    const id = this.hold(held);
    return { kind: 'input', id, requests: asked.map(({ method, params }) => ({ method, params })) };
  }

  private hold<T>(held: Held<T>): string {
    const mine = [...this.held.values()].filter((h) => h.owner === held.owner).length;
    if (mine >= this.limits.perPrincipal || this.held.size >= this.limits.max) {
      this.abandon(held, 'too many calls are waiting for answers; answer those first, or call again later');
      throw new ContinuationError(
        'CONTINUATIONS_FULL',
        `${mine >= this.limits.perPrincipal ? `this agent has ${mine}` : `${this.held.size}`} calls waiting for answers already, the most ringfence holds; answer those first, or call again later`,
      );
    }
    const id = randomBytes(18).toString('base64url');
    held.timer = setTimeout(() => {
      if (this.held.get(id) !== held) return;
      this.release(id, held);
      this.abandon(
        held,
        `the client did not come back with answers within ${Math.round(this.limits.ttlMs / 1000)} s (abandoned)`,
      );
    }, this.limits.ttlMs);
    held.timer.unref();
    this.held.set(id, held as Held<unknown>);
    return id;
  }

  private release<T>(id: string, held: Held<T>): void {
    this.held.delete(id);
    if (held.timer) clearTimeout(held.timer);
  }

  /** The held call given up: its server's requests refused, then the call cancelled. */
  private abandon<T>(held: Held<T>, reason: string): void {
    for (const request of [...held.asked.splice(0), ...held.sink.take()])
      request.reject(new ContinuationError('NOT_ANSWERED', reason));
    held.controller.abort(reason);
  }
}
