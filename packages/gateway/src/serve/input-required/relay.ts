import { type InputRequiredResult, inputRequired, type ServerContext } from '@modelcontextprotocol/server';
import type { ServerConfig } from '../../config/servers.js';
import type { AuditSink } from '../../ports/audit.js';
import type { Caller } from '../../ports/caller.js';
import type { RequestSink, ServerRequests } from '../server-requests.js';
import { ASK_KEY, askRequest, askThroughRounds } from './ask.js';
import type { Continuations, ParkedRequest } from './continuations.js';
import {
  type CallRef,
  type Principal,
  RequestStateRefused,
  type RequestStateSeal,
  type StateBody,
} from './sealed-state.js';
import { answersForServer, passOnInputRequests } from './upstream-input.js';

/**
 * The rounds of one MCP 2026-07-28 call through ringfence, whatever the server's era: opening the
 * client's round (its requestState checked, audited when refused), ringfence's own question
 * (policy `ask`), a 2026 server's input requests relayed, and a 2025 server's requests held
 * (continuations.ts). The endpoint calls these around the pipeline; nothing here forwards a call.
 */

/** What the audit log names a refused round by: the call's server and definition. */
export interface RoundSubject {
  readonly server: string;
  /** A tool or prompt name, or a URI. */
  readonly tool: string;
  readonly kind?: 'prompt' | 'resource';
}

/** One round of a call, opened. */
export interface OpenedRound {
  /** What the previous round of this call left (absent on a first round). */
  readonly body?: StateBody;
  /** The client's answers, only when its state was ringfence's: otherwise none count. */
  readonly responses?: Readonly<Record<string, unknown>>;
  /** The caller's `ask` for this round (see ask.ts), and whether the call is approved by now. */
  readonly ask: NonNullable<Caller['ask']>;
  approved(): boolean;
}

/** The upstream's `input_required` result, as the upstream client returns it. */
export interface UpstreamInputRequired {
  readonly resultType: 'input_required';
  readonly inputRequests?: unknown;
  readonly requestState?: unknown;
}

export const isUpstreamInputRequired = (result: unknown): result is UpstreamInputRequired =>
  typeof result === 'object' &&
  result !== null &&
  (result as { resultType?: unknown }).resultType === 'input_required';

export interface RelayDeps {
  readonly seal: RequestStateSeal;
  readonly continuations: Continuations;
  readonly serverRequests: ServerRequests;
  readonly audit: AuditSink;
  readonly policyRef: () => Record<string, unknown>;
}

export class InputRequiredRelay {
  constructor(private readonly deps: RelayDeps) {}

  /**
   * The client's round opened. A retry without ringfence's state is a new call: its
   * `inputResponses` are dropped (a client cannot answer a question it was not asked, least of
   * all ringfence's own). A state that does not count is audited as a refused call and
   * rethrown for the client as -32602.
   */
  async open(
    ctx: ServerContext,
    principal: Principal,
    call: CallRef,
    subject: RoundSubject,
  ): Promise<OpenedRound> {
    const raw = ctx.mcpReq.requestState();
    if (raw === undefined) return { ...askThroughRounds({}) };
    let body: StateBody;
    try {
      body = await this.deps.seal.open(ctx, principal, call, raw);
    } catch (error) {
      if (!(error instanceof RequestStateRefused)) throw error;
      const refused = error;
      await this.deps.audit.append({
        type: 'mcp.decision',
        ...(principal.agent ? { agent: principal.agent } : {}),
        ...(principal.scope ? { scope: principal.scope } : {}),
        refs: {
          phase: 'call',
          server: subject.server,
          tool: subject.tool,
          ...(subject.kind ? { kind: subject.kind } : {}),
          allowed: false,
          rule: 'request-state',
          reason: refused.message,
          arguments: call.args ?? {},
          ...this.deps.policyRef(),
        },
      });
      throw refused.toProtocolError();
    }
    const responses = ctx.mcpReq.inputResponses;
    const asked = askThroughRounds({ approved: body.approved, asking: body.asking, responses });
    return { body, ...(responses ? { responses } : {}), ...asked };
  }

  /** ringfence's own question (policy `ask`) as the client's next round. */
  async ask(
    ctx: ServerContext,
    principal: Principal,
    call: CallRef,
    server: string,
    question: string,
  ): Promise<InputRequiredResult> {
    const requestState = await this.deps.seal.seal(ctx, principal, call, { server, asking: true });
    return inputRequired({ inputRequests: { [ASK_KEY]: askRequest(question) as never }, requestState });
  }

  /**
   * What the upstream's retry carries, from the round the client answered: its answers under the
   * server's keys, checked and audited, the roots ringfence answers itself, and the server's own
   * requestState as it came. Nothing when this round opened no server's round.
   */
  async upstreamRetry(
    config: ServerConfig,
    client: Pick<RequestSink, 'agent' | 'scope'>,
    round: OpenedRound,
    rootsAnswer: () => Record<string, unknown>,
  ): Promise<{ inputResponses?: Record<string, unknown>; requestState?: string }> {
    const body = round.body;
    if (
      !body ||
      body.cont !== undefined ||
      (body.keys === undefined && body.roots === undefined && body.up === undefined)
    )
      return {};
    const inputResponses = await answersForServer(
      this.deps.serverRequests,
      config,
      client,
      body,
      round.responses,
      rootsAnswer,
    );
    return { inputResponses, ...(body.up !== undefined ? { requestState: body.up } : {}) };
  }

  /**
   * A 2026 server's `input_required` for the client: its requests decided and passed on under
   * ringfence's keys with ringfence's state around the server's; or, when it asked only for
   * roots, the retry to send it at once. Throws `ServerRequestRefused` when a request is refused.
   */
  async relay(
    ctx: ServerContext,
    principal: Principal,
    call: CallRef,
    config: ServerConfig,
    client: RequestSink,
    upstream: UpstreamInputRequired,
    approved: boolean,
  ): Promise<{ kind: 'client'; result: InputRequiredResult } | { kind: 'local'; body: StateBody }> {
    const passed = await passOnInputRequests(
      this.deps.serverRequests,
      config,
      client,
      upstream.inputRequests,
    );
    const up = typeof upstream.requestState === 'string' ? upstream.requestState : undefined;
    const body: StateBody = {
      server: config.name,
      ...(approved ? { approved: true } : {}),
      ...(passed.kind === 'client' ? { keys: passed.keys } : {}),
      ...(passed.roots.length > 0 ? { roots: passed.roots } : {}),
      ...(up !== undefined ? { up } : {}),
    };
    if (passed.kind === 'local') return { kind: 'local', body };
    const requestState = await this.deps.seal.seal(ctx, principal, call, body);
    return {
      kind: 'client',
      result: inputRequired({ inputRequests: passed.inputRequests as never, requestState }),
    };
  }

  /** A held call's requests (a 2025 server asked mid-call) as the client's next round. */
  async held(
    ctx: ServerContext,
    principal: Principal,
    call: CallRef,
    server: string,
    id: string,
    requests: readonly ParkedRequest[],
    approved: boolean,
  ): Promise<InputRequiredResult> {
    const requestState = await this.deps.seal.seal(ctx, principal, call, {
      server,
      cont: id,
      ...(approved ? { approved: true } : {}),
    });
    const inputRequests = Object.fromEntries(requests.map((request, i) => [`q${i}`, request]));
    return inputRequired({ inputRequests: inputRequests as never, requestState });
  }
}
