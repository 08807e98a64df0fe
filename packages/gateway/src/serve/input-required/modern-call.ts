import {
  type InputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import type { ServerConfig } from '../../config/servers.js';
import { AskDeferred, type Caller } from '../../ports/caller.js';
import { type RequestSink, type ServerRequestKind, ServerRequestRefused } from '../server-requests.js';
import { ContinuationError, type Continuations, ParkingSink, type Round } from './continuations.js';
import { type InputRequiredRelay, isUpstreamInputRequired, type RoundSubject } from './relay.js';
import type { CallRef, Principal } from './sealed-state.js';
import { answersForServer } from './upstream-input.js';

/**
 * One `tools/call`, `prompts/get` or `resources/read` of an MCP 2026-07-28 client, round by
 * round: the endpoint's whole use of input-required. `run` is the call through the pipeline, as
 * for any client, given this round's `ask` (policy `ask` becomes ringfence's question), the sink
 * a 2025 server's requests go to (they are held for the client's next round), and what a 2026
 * server's retry carries (its answers and its own requestState). What comes back is the call's
 * result, or an `input_required` result for the client.
 */

/** How many times a 2026 server may ask only for roots (answered at once) before it is refused. */
export const LOCAL_LEGS_MAX = 4;

export interface RoundRun {
  /** Absent when the client declared no form elicitation: nobody can be asked (the pipeline says so). */
  readonly ask: Caller['ask'];
  readonly sink: RequestSink;
  /** For a 2026 server: the retry's `inputResponses` and `requestState` (absent on a first call). */
  readonly upstream: { readonly inputResponses?: Record<string, unknown>; readonly requestState?: string };
  /** Cancels the call: the client's cancel, or a held call given up. */
  readonly signal: AbortSignal;
}

export interface ModernCall<R> {
  readonly ctx: ServerContext;
  readonly principal: Principal;
  readonly call: CallRef;
  readonly subject: RoundSubject;
  /** The server's registration (its `--allow-*` flags), when the call names a known server. */
  readonly config: ServerConfig | undefined;
  /** What this client declared it can answer (the request's `_meta` envelope, or its `initialize`). */
  readonly capable: (kind: ServerRequestKind) => boolean;
  /**
   * A 2025 client's session, served through the SDK's legacy shim: a 2025 server's requests go to
   * it as they do today (nothing is held), and `input_required` results become pushed requests.
   */
  readonly session?: RequestSink;
  /** The server's roots answer (its mounts as it sees them). */
  readonly roots: () => Record<string, unknown>;
  /** The call through the pipeline; a 2026 server's `input_required` comes back as it is. */
  run(round: RoundRun): Promise<R | unknown>;
  /** The result for a server's request ringfence refused (an error result, or a thrown JSON-RPC error). */
  refused(message: string): R;
}

export class ModernCalls {
  constructor(
    private readonly relay: InputRequiredRelay,
    private readonly continuations: Continuations,
    private readonly serverRequests: Parameters<typeof answersForServer>[0],
  ) {}

  async serve<R>(call: ModernCall<R>): Promise<R | InputRequiredResult> {
    const { ctx, principal } = call;
    const round = await this.relay.open(ctx, principal, call.call, call.subject);
    const ask = call.capable('elicitation') ? round.ask : undefined;
    const sink = call.session ?? new ParkingSink(principal, call.capable);
    const signal = ctx.mcpReq.signal;
    // A 2025 session is asked directly; a 2026 client's call runs where a 2025 server's request can be held.
    const leg = (upstream: RoundRun['upstream']): Promise<Round<unknown>> =>
      sink instanceof ParkingSink
        ? this.continuations.start(
            principal,
            sink,
            (s, callSignal) => call.run({ ask, sink: s, upstream, signal: callSignal }),
            signal,
          )
        : call.run({ ask, sink, upstream, signal }).then((value) => ({ kind: 'done', value }));
    try {
      if (round.body?.cont !== undefined) {
        const resumed = await this.continuations.resume(round.body.cont, principal, round.responses, signal);
        return await this.settled(call, resumed, round.approved());
      }
      let upstream: RoundRun['upstream'] = call.config
        ? await this.relay.upstreamRetry(call.config, sink, round, call.roots)
        : {};
      for (let legs = 0; legs <= LOCAL_LEGS_MAX; legs++) {
        const held = await leg(upstream);
        if (held.kind === 'input' || !isUpstreamInputRequired(held.value) || !call.config)
          return await this.settled(call, held, round.approved());
        const relayed = await this.relay.relay(
          ctx,
          principal,
          call.call,
          call.config,
          sink,
          held.value,
          round.approved(),
        );
        if (relayed.kind === 'client') return relayed.result;
        // Only roots were asked: answered from the mounts, and the server is called again at once.
        upstream = {
          inputResponses: await answersForServer(
            this.serverRequests,
            call.config,
            sink,
            relayed.body,
            undefined,
            call.roots,
          ),
          ...(relayed.body.up !== undefined ? { requestState: relayed.body.up } : {}),
        };
      }
      return call.refused(
        `ringfence refused the input requests of ${call.subject.server}: it asked only for roots ${LOCAL_LEGS_MAX + 1} times in a row`,
      );
    } catch (error) {
      if (error instanceof AskDeferred)
        return this.relay.ask(ctx, principal, call.call, call.subject.server, error.question);
      if (error instanceof ServerRequestRefused) return call.refused(error.message);
      if (error instanceof ContinuationError) {
        if (error.code === 'CONTINUATIONS_FULL')
          return call.refused(`ringfence refused the call: ${error.message}`);
        throw new ProtocolError(ProtocolErrorCode.InvalidParams, `ringfence: ${error.message}`);
      }
      throw error;
    }
  }

  /** A round's end: a held call's requests for the client, or the call's result. */
  private async settled<R>(
    call: ModernCall<R>,
    held: Round<unknown>,
    approved: boolean,
  ): Promise<R | InputRequiredResult> {
    if (held.kind === 'input')
      return this.relay.held(
        call.ctx,
        call.principal,
        call.call,
        call.subject.server,
        held.id,
        held.requests,
        approved,
      );
    return held.value as R;
  }
}
