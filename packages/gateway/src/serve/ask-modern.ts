/**
 * `ask` for MCP 2026-07-28 clients: the question goes back as an `input_required` result carrying
 * an elicitation, and the client retries the same call with the person's answer. What ties the
 * answer to the question is a `requestState` sealed by the SDK's codec (HMAC, a key made once per
 * process, ten minutes), bound to the caller (its token's digest and agent, or this stdio
 * process) and to the call (a digest of the tool's name and arguments), and spent once: a state
 * replayed by another token, for another call, a second time, late, or altered is refused.
 */
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import {
  createRequestStateCodec,
  type InputRequiredResult,
  inputRequired,
  inputResponse,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { AskDeferred, type Caller } from '../ports/caller.js';

interface AskState {
  /** Digest of the call the question is about. */
  readonly call: string;
  /** Spent when answered: one question, one answer. */
  readonly nonce: string;
}

const TTL_SECONDS = 600;
/** The key of the elicitation in `inputRequests`/`inputResponses`. */
const ASK_KEY = 'ringfence_approval';

const codec = createRequestStateCodec<AskState>({
  key: randomBytes(32),
  ttlSeconds: TTL_SECONDS,
  bind: (ctx) =>
    [ctx.mcpReq.method, ctx.http?.authInfo?.token ?? 'stdio', ctx.http?.authInfo?.clientId ?? ''].join('\0'),
});

/** The `requestState.verify` hook of a 2026 endpoint instance: the SDK refuses what it throws on. */
export const verifyAskState = (state: string, ctx: ServerContext) => codec.verify(state, ctx);

/** Nonces answered, until their state could no longer verify anyway. */
const spent = new Map<string, number>();
function spend(nonce: string): boolean {
  const now = Date.now();
  for (const [n, until] of spent) if (until <= now) spent.delete(n);
  if (spent.has(nonce)) return false;
  spent.set(nonce, now + TTL_SECONDS * 1000 + 60_000);
  return true;
}

export function callDigest(name: string, args: unknown): string {
  return createHash('sha256')
    .update(JSON.stringify([name, args ?? {}]))
    .digest('hex');
}

/**
 * The caller's `ask` for one 2026 `tools/call`: the answer this retry carries for this call, or
 * `AskDeferred` (the endpoint then returns the question with `questionFor`).
 */
export function modernAsk(ctx: ServerContext, call: string): NonNullable<Caller['ask']> {
  return async (question) => {
    const state = ctx.mcpReq.requestState<AskState>();
    if (state && state.call === call && spend(state.nonce)) {
      const answer = inputResponse(ctx.mcpReq.inputResponses, ASK_KEY);
      return answer.kind === 'elicit' ? answer.action : 'cancel';
    }
    throw new AskDeferred(question);
  };
}

/** The `input_required` result that asks the person `question` about `call`. */
export async function questionFor(
  ctx: ServerContext,
  call: string,
  question: string,
): Promise<InputRequiredResult> {
  return inputRequired({
    inputRequests: {
      [ASK_KEY]: inputRequired.elicit({
        message: question,
        requestedSchema: { type: 'object', properties: {} },
      }),
    },
    requestState: await codec.mint({ call, nonce: randomUUID() }, ctx),
  });
}
