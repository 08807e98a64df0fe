import { randomBytes } from 'node:crypto';
import {
  createRequestStateCodec,
  ProtocolError,
  ProtocolErrorCode,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { RingfenceError } from '@ringfence/policy';
import { callDigest } from './call-digest.js';
import { StateLedger } from './state-ledger.js';

/**
 * ringfence's own `requestState` (MCP 2026-07-28 multi-round requests): what the gateway must
 * remember between a client's rounds of one call, sealed with the SDK's HMAC codec under a key
 * made for this process (no flow outlives the process), and bound to:
 * - the principal (agent and scope) and the method, through the codec's bind tag;
 * - the call (method, tool, prompt or URI, and arguments), through a digest in the payload;
 * - one use: an id in the payload, taken out of the `StateLedger` when the retry presents it.
 * The codec signs and does not encrypt: the client can read the payload, so nothing secret goes
 * in (an upstream's own `requestState` is the upstream's to protect, and travels as it came).
 */

/** How long a client may take to answer one round: the time a person is given today. */
export const REQUEST_STATE_TTL_SECONDS = 600;

/** Who a state belongs to: the caller's agent and scope (both absent over stdio without a token). */
export interface Principal {
  readonly agent?: string;
  readonly scope?: string;
}

/** The call a state belongs to: the method and what it names (tool or prompt name, URI). */
export interface CallRef {
  readonly method: string;
  readonly target: string;
  readonly args: unknown;
}

/** Where one client-facing input key leads: an upstream's key, or a continuation's parked request. */
export interface KeyRoute {
  /** The upstream's own key (a 2026 upstream), or the parked request's index (a continuation). */
  readonly up: string;
  readonly method: string;
  /** The `mcp.server_request` entry the answer will name as its parent. */
  readonly seq: number;
}

/** What ringfence carries from one round of a call to the next. */
export interface StateBody {
  /** The server the call goes to. */
  readonly server: string;
  /** A person approved this call (policy `ask`) in an earlier round of it. */
  readonly approved?: true;
  /** ringfence's own question (policy `ask`) is what this round asks. */
  readonly asking?: true;
  /** Client-facing keys of the input requests this round passed on. */
  readonly keys?: Readonly<Record<string, KeyRoute>>;
  /** The server's keys that asked for roots: ringfence answers them from the mounts. */
  readonly roots?: readonly string[];
  /** The upstream's own `requestState`, relayed byte for byte. */
  readonly up?: string;
  /** A continuation (an upstream call held open; see continuations.ts). */
  readonly cont?: string;
}

interface Sealed extends StateBody {
  readonly v: 1;
  readonly id: string;
  readonly call: string;
}

/** Why a state is refused, for the audit log and the person reading it. */
export type StateRefusal =
  | 'malformed'
  | 'mac'
  | 'expired'
  | 'bind'
  | 'other-call'
  | 'used'
  | 'other-principal';

const SHOWN: Record<StateRefusal, string> = {
  malformed: 'it is not a requestState ringfence issued',
  mac: 'it was changed after ringfence issued it, or ringfence restarted since',
  expired: 'it expired',
  bind: 'it was issued to another agent or for another method',
  'other-principal': 'it was issued to another agent',
  'other-call': 'it was issued for another call (other tool, prompt, URI or arguments)',
  used: 'it was used already (each one counts once)',
};

/** A presented `requestState` that does not count; `toProtocolError()` is what the client gets. */
export class RequestStateRefused extends RingfenceError<'REQUEST_STATE_REFUSED'> {
  constructor(readonly refusal: StateRefusal) {
    super('REQUEST_STATE_REFUSED', `ringfence refused the requestState: ${SHOWN[refusal]}`);
  }

  /** -32602, as the SDK answers a state its verify hook refuses; the message says what to do. */
  toProtocolError(): ProtocolError {
    return new ProtocolError(
      ProtocolErrorCode.InvalidParams,
      `${this.message}. Call again without requestState and inputResponses to start over.`,
      { reason: 'invalid_request_state' },
    );
  }
}

export const principalKey = (principal: Principal): string =>
  `${principal.agent ?? ''}\0${principal.scope ?? ''}`;

export class RequestStateSeal {
  private readonly codec;
  private readonly ledger: StateLedger;
  private readonly ttlSeconds: number;
  private readonly now: () => number;
  // The codec's bind callback sees only the context; the principal is looked up by it here.
  private readonly principals = new WeakMap<object, string>();

  constructor(
    options: { key?: Uint8Array; ttlSeconds?: number; ledger?: StateLedger; now?: () => number } = {},
  ) {
    this.ttlSeconds = options.ttlSeconds ?? REQUEST_STATE_TTL_SECONDS;
    this.now = options.now ?? Date.now;
    this.ledger = options.ledger ?? new StateLedger(undefined, this.now);
    this.codec = createRequestStateCodec<Sealed>({
      key: options.key ?? randomBytes(32),
      ttlSeconds: this.ttlSeconds,
      bind: (ctx) => {
        const principal = this.principals.get(ctx);
        // A context this seal was not handed is bound to nothing anybody can present.
        if (principal === undefined) throw new RequestStateRefused('bind');
        return `${principal}\0${ctx.mcpReq.method}`;
      },
    });
  }

  /** The wire `requestState` for the next round of `call`, usable once by `principal`. */
  async seal(ctx: ServerContext, principal: Principal, call: CallRef, body: StateBody): Promise<string> {
    const key = principalKey(principal);
    const id = this.ledger.issue(key, this.now() + this.ttlSeconds * 1000);
    this.principals.set(ctx, key);
    return this.codec.mint({ ...body, v: 1, id, call: callDigest(call.method, call.target, call.args) }, ctx);
  }

  /**
   * What a retry's `requestState` carries, once; throws `RequestStateRefused` when it was changed,
   * expired, issued to someone else or for another call, or used already.
   */
  async open(ctx: ServerContext, principal: Principal, call: CallRef, raw: unknown): Promise<StateBody> {
    if (typeof raw !== 'string') throw new RequestStateRefused('malformed');
    const key = principalKey(principal);
    this.principals.set(ctx, key);
    let sealed: Sealed;
    try {
      sealed = await this.codec.verify(raw, ctx);
    } catch (error) {
      const reason = (error as Error).message;
      throw new RequestStateRefused(
        reason === 'mac' || reason === 'expired' || reason === 'bind' ? reason : 'malformed',
      );
    }
    if (sealed?.v !== 1 || typeof sealed.id !== 'string') throw new RequestStateRefused('malformed');
    if (sealed.call !== callDigest(call.method, call.target, call.args))
      throw new RequestStateRefused('other-call');
    const redeemed = this.ledger.redeem(sealed.id, key);
    if (redeemed === 'unknown') throw new RequestStateRefused('used');
    if (redeemed !== 'ok') throw new RequestStateRefused(redeemed);
    const { v: _v, id: _id, call: _call, ...body } = sealed;
    return body;
  }
}
