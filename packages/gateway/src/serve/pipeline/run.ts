import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { canonicalForm, type PrecomputedDigest } from '../../audit/format.js';
import { WireError } from '../../errors.js';
import { startingAs } from '../../ports/call-owner.js';
import { AskDeferred, type CallToolResult } from '../../ports/caller.js';
import { MissingClientCapability, UpstreamError } from '../../ports/errors.js';
import type { CallObservation } from '../../ports/observer.js';
import type { CallOptions } from '../../ports/upstream.js';
import { needsTasksExtension } from '../../tasks/wire.js';
import { printable } from '../../text/printable.js';
import { redactedLine } from '../../text/redact.js';
import { type Span, SpanKind } from '../../traces/index.js';
import { isUpstreamInputRequired } from '../input-required/relay.js';
import type { CompletionAnswer } from './completions.js';
import { stepsOf } from './method-steps.js';
import { requestName, shownRequestLabel } from './methods.js';
import { observeCall, refusalObserved } from './observe.js';
import { errorResult, recordDecision, recordResult, refuse } from './record.js';
import { sanitise, upstreamErrorText } from './results.js';
import { ingressSecrets } from './secrets.js';
import { availability, rulesAndAsk, shapeAndSize } from './steps.js';
import type {
  CompletionRequest,
  ForwardedRequest,
  LogLevelRequest,
  PipelineDeps,
  PromptGetRequest,
  PromptResult,
  ReadResult,
  Refusal,
  ResourceReadRequest,
  SubscriptionRequest,
  ToolCallRequest,
} from './types.js';

/**
 * One forwarded request through its steps: shape and size → rules and ask (with the
 * invisible-argument refusal and the egress scan of the arguments, `secrets.ts`) → arguments (the tool's pinned input schema, the prompt's declared
 * arguments, a completion's declared argument) → availability → (decision entry, durable) →
 * forward → result checks → ingress scan (secrets replaced by markers) → sanitise → (result entry) → reply. Every method the gateway forwards
 * upstream for a client comes here (`methods.ts`; only `method-steps.ts` differs by method). The
 * lookup ran before: the request names a listed definition or a readable URI. Every refusal is an
 * error result that says what happened and what to do (for a method with no error result, the
 * caller turns it into a JSON-RPC error); nothing refused reaches the upstream.
 */
export async function runForward(deps: PipelineDeps, request: ToolCallRequest): Promise<CallToolResult>;
export async function runForward(
  deps: PipelineDeps,
  request: PromptGetRequest,
): Promise<PromptResult | CallToolResult>;
export async function runForward(
  deps: PipelineDeps,
  request: ResourceReadRequest,
): Promise<ReadResult | CallToolResult>;
export async function runForward(
  deps: PipelineDeps,
  request: CompletionRequest,
): Promise<CompletionAnswer | CallToolResult>;
export async function runForward(
  deps: PipelineDeps,
  request: SubscriptionRequest | LogLevelRequest,
): Promise<Record<string, never> | CallToolResult>;
export async function runForward(deps: PipelineDeps, request: ForwardedRequest): Promise<unknown> {
  // Traces off: this one check is all a call pays (no span, no copy of the request).
  if (!deps.tracer) return forwardRequest(deps, request);
  const span = deps.tracer.startCall(callSpanName(request), request.traceparent);
  if (!span) return forwardRequest(deps, request);
  // Names only, never an argument value or a read's URI (it may carry what an argument would).
  span.set('mcp.method.name', request.method).set('ringfence.server', request.entry.server);
  if (request.entry.kind === 'tool') span.set('gen_ai.tool.name', requestName(request));
  else if (request.entry.kind === 'prompt') span.set('gen_ai.prompt.name', requestName(request));
  try {
    return await forwardRequest(deps, { ...request, span });
  } catch (error) {
    // A 2026 ask goes to the client as input_required: the call goes on in the client's retry
    // (its own span), nothing failed.
    if (error instanceof AskDeferred) span.set('ringfence.decision', 'asked');
    else span.fail('the call ended with an error');
    throw error;
  } finally {
    span.end();
  }
}

/** `tools/call NAME` (MCP semantic conventions), the method alone when no name is safe to show. */
function callSpanName(request: ForwardedRequest): string {
  const { kind } = request.entry;
  return kind === 'tool' || kind === 'prompt' ? `${request.method} ${requestName(request)}` : request.method;
}

async function forwardRequest(deps: PipelineDeps, request: ForwardedRequest): Promise<unknown> {
  const { span } = request;
  const observed = observeCall(deps, request);
  // With traces off `span` is undefined and each `span?.` below is a property read, nothing more.
  const deciding = span?.child('ringfence.decide');
  let decided: Awaited<ReturnType<typeof decideForward>>;
  let decisionSeq: number;
  try {
    decided = await decideForward(deps, request, observed);
    if (!decided.pass) {
      observed?.ended();
      return decided.reply;
    }
    decisionSeq = await recordDecision(deps, request, decided.verdict, decided.digest);
  } finally {
    deciding?.end();
  }
  const forwarding = span?.child('ringfence.forward', SpanKind.client);
  let settled: Settled;
  observed?.forwarding();
  try {
    settled = { ok: true, value: await decided.forward(callOptions(deps, request, forwarding)) };
  } catch (error) {
    settled = { ok: false, error };
    forwarding?.fail('the upstream request failed');
  }
  forwarding?.end();
  observed?.answered(settled.ok);
  const resulting = span?.child('ringfence.result');
  try {
    const { reply, entry, wire } = await outcomeOf(deps, request, settled);
    resulting?.set('ringfence.result.is_error', entry.isError);
    if (entry.isError) span?.fail(settled.ok ? 'the result is an error' : 'the upstream request failed');
    // An upstream failure's entry is durable before the reply. After an answer the decision was made
    // durable before forwarding; the result entry is deferred (it shares the next call's write and
    // fsync, or is written within 50 ms; the log keeps its order) and not awaited, so neither this
    // reply nor the next call waits for a second fsync.
    if (!settled.ok) await recordResult(deps, request, decisionSeq, entry);
    else
      recordResult(deps, request, decisionSeq, entry, { defer: true }).catch((error: unknown) =>
        deps.log(
          `ringfence: audit: the result of ${shownRequestLabel(request)} could not be recorded: ${redactedLine((error as Error).message)}`,
        ),
      );
    observed?.ended();
    // Only after its result entry is durable: the server's refusal goes to the client as an error.
    if (wire) throw wire;
    return reply;
  } finally {
    resulting?.end();
  }
}

/** How the upstream request ended, before any check of the gateway's ran on its answer. */
export type Settled =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

/** A request that passed every check: what the decision entry records, and the one request to send. */
export interface Decided {
  readonly pass: true;
  readonly verdict: { allowed: true; rule: string; reason: string; secrets?: string };
  readonly digest: PrecomputedDigest;
  readonly forward: (options: CallOptions) => Promise<unknown>;
}

/**
 * The deciding half: shape and size → rules and ask (with the invisible-argument refusal) →
 * arguments → availability. A refusal's decision entry is written here, durable, and its reply
 * returned; a pass writes nothing yet (the caller writes the allowing entry, naming a task if the
 * call becomes one) and returns the request to send.
 */
export async function decideForward(
  deps: PipelineDeps,
  request: ForwardedRequest,
  /** Told the decision (metrics, traces), refusal or pass. */
  observed?: CallObservation,
): Promise<Decided | { pass: false; reply: CallToolResult }> {
  const args = (request.args ?? {}) as Record<string, unknown>;
  // The arguments are serialised once: their canonical JSON gives the size cap its count and the
  // decision entry its digest.
  const { json, digest } = canonicalForm(args);
  const refused = async (outcome: Refusal) => {
    observed?.decided(refusalObserved(outcome));
    return { pass: false as const, reply: await refuse(deps, request, outcome, digest) };
  };
  const shaped = shapeAndSize(deps, request, json);
  if (!shaped.pass) return refused(shaped);

  const verdict = await rulesAndAsk(deps, request, args);
  if (!verdict.pass) return refused(verdict);
  const steps = stepsOf(request);
  for (const step of [() => steps.checkArguments(deps, request, args), () => availability(request)]) {
    const outcome = await step();
    if (!outcome.pass) return refused(outcome);
  }

  // A client that gave up while the checks ran (an ask can take minutes) gets nothing forwarded.
  if (request.signal?.aborted) return refused(CANCELLED_BEFORE_FORWARD);
  observed?.decided({ allowed: true, rule: verdict.rule, ...(verdict.asked ? { asked: true } : {}) });
  return {
    pass: true,
    verdict: {
      allowed: true,
      rule: verdict.rule,
      reason: verdict.reason,
      ...(verdict.secrets ? { secrets: verdict.secrets } : {}),
    },
    digest,
    // The owner is current while the upstream call starts, where an upstream reads it.
    forward: (options) => startingAs(request.owner, () => steps.forward(request, args, options)),
  };
}

/** What the result entry of a request records (see `recordResult`). */
export type ResultEntryFields = Parameters<typeof recordResult>[3];

/**
 * The result half, up to (not including) the result entry: the server's answer checked and
 * sanitised, or its failure said for the client; and the fields of the result entry to write.
 * `wire`: a failure the client is told as a JSON-RPC error rather than `reply` (a plain request's
 * caller throws it; a task's result is `reply`, there being no request left to answer).
 */
export async function outcomeOf(
  deps: PipelineDeps,
  request: ForwardedRequest,
  settled: Settled,
): Promise<{ reply: unknown; entry: ResultEntryFields; wire?: WireError }> {
  const label = shownRequestLabel(request);
  if (!settled.ok) {
    const { error } = settled;
    if (needsTasksExtension(error))
      return {
        entry: {
          result: upstreamErrorText(error),
          isError: true,
          reason: 'the server needs the tasks extension',
        },
        reply: errorResult(
          `ringfence: ${label} could not run: its server (MCP 2026-07-28) runs it only as a task of the tasks extension (io.modelcontextprotocol/tasks), which ringfence cannot relay to a server yet. Ask the server's maintainers to make tasks optional for it, or use it without ringfence.`,
        ),
      };
    if (error instanceof MissingClientCapability) return missingCapability(label, error);
    // A remote server's OAuth login is needed (or its token may not be used): the words are the
    // gateway's own (remote-auth/login-needed.ts, no token, no server text unrendered), said whole
    // so the command they name reaches the model and the person.
    const code = (error as { code?: unknown })?.code;
    if (code === 'LOGIN_NEEDED' || code === 'AUTH_REFUSED')
      return {
        entry: {
          result: (error as Error).message,
          isError: true,
          reason: code === 'LOGIN_NEEDED' ? 'a login is needed' : 'the held token may not be used',
        },
        reply: errorResult(`ringfence: ${label} could not run: ${(error as Error).message}`),
      };
    const ended = endedWithoutAnswer(request, error);
    // The server chooses the text of its own errors: it is capped and made printable for the
    // model, and the audit log keeps only its digest (it may echo the arguments, never stored).
    const message = upstreamErrorText(error);
    // A server's error text reaches the model too: it is scanned as a result is.
    const scanned = await ingressSecrets(
      deps,
      errorResult(
        ended?.reply ??
          `ringfence: ${label} failed upstream: ${message}. The server's last output is shown by: ringfence mcp ls --logs`,
      ),
    );
    return {
      entry: {
        result: message,
        isError: true,
        reason: ended?.reason ?? 'upstream failed',
        ...(ended?.cancelled ? { cancelled: ended.cancelled } : {}),
        ...(scanned.redacted ? { redacted: scanned.redacted, redactedClasses: scanned.redactedClasses } : {}),
      },
      reply: scanned.reply,
    };
  }
  const result = settled.value;
  // A 2026 server asking for input is no result yet: its requests go to the relay as they came
  // (serve/input-required/), which decides, renders and labels each one before anyone sees it.
  // Only a caller that relays them is ever handed one (the upstream client fails it otherwise).
  if (request.upstreamInput !== undefined && isUpstreamInputRequired(result))
    return {
      reply: result,
      entry: {
        result,
        isError: false,
        reason: 'the server asked for input (input_required); its requests went to the relay',
      },
    };
  const steps = stepsOf(request);
  const outcome = await steps.checkResult(deps, request, result);
  // Ingress: after the checks (which judged what the server sent), before the sanitiser (which
  // compares a structuredContent with its text twin: both are redacted alike).
  const scanned = outcome.refused ? { reply: outcome.reply } : await ingressSecrets(deps, outcome.reply);
  const checked = sanitise(deps, request, { ...outcome, reply: scanned.reply }, steps);
  return {
    reply: checked.reply,
    entry: {
      // The digest the size check computed, when it could: the result is not serialised again.
      // A subscription's or a log level's answer is empty (the upstream client returns nothing).
      result: checked.digest ?? result ?? {},
      isError: (checked.reply as { isError?: unknown }).isError === true,
      ...(checked.refused ? { reason: `result withheld: ${checked.refused}` } : {}),
      ...(checked.dropped ? { dropped: checked.dropped } : {}),
      ...(scanned.redacted ? { redacted: scanned.redacted, redactedClasses: scanned.redactedClasses } : {}),
    },
  };
}

/**
 * A 2026 server's -32021: passed on to the client as that error (code, and the capabilities the
 * server named as its `data`), so a client that can declare the capability knows to; the message
 * is the gateway's, with the server's own text rendered as any server error is.
 */
function missingCapability(
  label: string,
  error: MissingClientCapability,
): { reply: CallToolResult; entry: ResultEntryFields; wire: WireError } {
  const text = `ringfence: ${label} was refused by its server: ${error.message}. The server said: ${upstreamErrorText({ message: error.serverMessage })}`;
  return {
    entry: {
      // As any server error: its code and text (the audit log keeps only the digest).
      result: upstreamErrorText({
        code: ProtocolErrorCode.MissingRequiredClientCapability,
        message: error.serverMessage,
      }),
      isError: true,
      reason: 'the server needs a client capability the request did not declare',
    },
    reply: errorResult(text),
    wire: new WireError(ProtocolErrorCode.MissingRequiredClientCapability, text, {
      requiredCapabilities: error.requiredCapabilities,
    }),
  };
}

const CANCELLED_BEFORE_FORWARD: Refusal = {
  pass: false,
  code: 'CANCELLED',
  rule: 'cancelled',
  reason: 'the client cancelled the call before it was forwarded',
  what: 'the client cancelled the call before it was forwarded; nothing reached the server.',
};

/** The client's cancel and progress, and the policy's cap on the call's whole time. */
export function callOptions(deps: PipelineDeps, request: ForwardedRequest, forwarding?: Span): CallOptions {
  const { server } = request.entry;
  const cap = deps.policy.maxCallSeconds(server);
  // Traced, the server's parent is the gateway's forward span (same trace as the client's); not
  // traced, the client's own traceparent goes on as it came.
  const traceparent = forwarding ? forwarding.traceparent() : request.traceparent;
  return {
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
    ...(traceparent ? { traceparent } : {}),
    ...(request.upstreamInput ? { upstreamInput: request.upstreamInput } : {}),
    ...(request.clientCapabilities ? { clientCapabilities: request.clientCapabilities } : {}),
    ...(request.owner ? { owner: request.owner } : {}),
    ...(cap !== undefined
      ? { cap: { ms: cap * 1000, source: `the organisation policy (mcp[].max_call_seconds for ${server})` } }
      : {}),
  };
}

/**
 * A call that ended without the server's answer, for the result entry and the reply: cancelled
 * by the client, timed out (the gateway cancelled it upstream), or lost with its connection or
 * container. Undefined for the server's own error. The entry's reason is the gateway's fixed
 * text: the message may quote what a server sent.
 */
function endedWithoutAnswer(
  request: ForwardedRequest,
  error: unknown,
): { reason: string; reply: string; cancelled?: 'client' | 'timeout' } | undefined {
  if (!(error instanceof UpstreamError)) return undefined;
  const label = shownRequestLabel(request);
  const message = printable(error.message);
  switch (error.code) {
    case 'CALL_CANCELLED':
      return {
        reason: 'cancelled by the client',
        cancelled: 'client',
        reply: `ringfence: the call to ${label} was cancelled by the client; the server was told to stop.`,
      };
    case 'CALL_TIMEOUT':
      return {
        reason: 'timed out without progress',
        cancelled: 'timeout',
        reply: `ringfence: ${label} timed out: ${message}.`,
      };
    case 'CALL_CEILING':
      return {
        reason: 'reached the call ceiling',
        cancelled: 'timeout',
        reply: `ringfence: ${label} timed out: ${message}.`,
      };
    case 'UPSTREAM_LOST':
    case 'UPSTREAM_MALFORMED':
      return {
        reason: error.code === 'UPSTREAM_LOST' ? 'upstream lost' : 'upstream answer stream malformed',
        reply: `ringfence: ${label} failed: ${upstreamErrorText({ message: error.message })}. Check that the server is up; its last output is shown by: ringfence mcp ls --logs`,
      };
    default:
      return undefined;
  }
}
