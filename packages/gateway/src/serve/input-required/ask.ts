import { AskDeferred, type Caller } from '../../ports/caller.js';
import type { EmbeddedRequest } from './upstream-input.js';

/**
 * Policy `ask` for an MCP 2026-07-28 client: the person is asked by an `input_required` result
 * (an elicitation under ringfence's own key), and the answer comes with the client's retry. The
 * round that asks seals `asking` into its state; only a retry presenting that state, for the same
 * call, by the same principal, once, has its answer read. A state from a server's round never
 * has `asking`, and a server's requests are passed on under other keys (`u0`, `q0`, …), so a
 * server cannot put the question, or its answer, in ringfence's place.
 */

/** ringfence's own key in `inputRequests`; the keys of servers' requests never take this form. */
export const ASK_KEY = 'ringfence_approval';

/** The elicitation that asks the person: a form with no fields, accept or decline. */
export function askRequest(question: string): EmbeddedRequest {
  return {
    method: 'elicitation/create',
    params: { mode: 'form', message: question, requestedSchema: { type: 'object', properties: {} } },
  };
}

/**
 * `Caller.ask` for one round of a 2026 call: 'accept' when a person approved an earlier round of
 * this very call; the person's answer when this round answers ringfence's question; else it
 * throws `AskDeferred` (ports/caller.ts: the question goes to the client). An answer other than an elicitation
 * "accept" or "decline" is 'cancel'. `approved()` says whether the call is approved by now, for
 * the state of the call's next round (a server of its own may still ask).
 */
export function askThroughRounds(round: {
  readonly approved?: boolean;
  readonly asking?: boolean;
  readonly responses?: Readonly<Record<string, unknown>>;
}): { ask: NonNullable<Caller['ask']>; approved(): boolean } {
  let approved = round.approved === true;
  return {
    approved: () => approved,
    ask: async (question) => {
      if (approved) return 'accept';
      if (!round.asking) throw new AskDeferred(question);
      const given =
        round.responses && Object.hasOwn(round.responses, ASK_KEY) ? round.responses[ASK_KEY] : undefined;
      const action = (given as { action?: unknown } | undefined)?.action;
      if (action === 'accept') approved = true;
      return action === 'accept' || action === 'decline' ? action : 'cancel';
    },
  };
}
