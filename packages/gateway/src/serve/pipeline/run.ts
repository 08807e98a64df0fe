import { canonicalForm } from '../../audit/format.js';
import type { CallToolResult } from '../../ports/caller.js';
import { UpstreamError } from '../../ports/errors.js';
import type { CallOptions } from '../../ports/upstream.js';
import { printable } from '../../text/printable.js';
import { rendered } from '../../text/render.js';
import { checkPromptResult, promptArguments } from './prompts.js';
import {
  errorResult,
  recordDecision,
  recordResult,
  refuse,
  requestLabel,
  shownRequestLabel,
} from './record.js';
import { checkReadResult } from './resources.js';
import { checkResult, sanitise, upstreamErrorText } from './results.js';
import { availability, inputSchema, rulesAndAsk, shapeAndSize } from './steps.js';
import type {
  ForwardedRequest,
  PipelineDeps,
  PromptGetRequest,
  PromptResult,
  ReadResult,
  Refusal,
  ResourceReadRequest,
  ToolCallRequest,
} from './types.js';
import { PASS } from './types.js';

/**
 * What differs by method: the arguments check, the forwarding, and the result check. Both
 * methods forward under the same cancel, progress and time limits (`callOptions`).
 */
const byMethod = {
  // A read's one argument is its URI, vetted against what the server listed before the pipeline.
  checkArguments: (deps: PipelineDeps, request: ForwardedRequest, args: Record<string, unknown>) =>
    request.method === 'prompts/get'
      ? promptArguments(request, args)
      : request.method === 'resources/read'
        ? PASS
        : inputSchema(deps, request, args),
  forward: (deps: PipelineDeps, request: ForwardedRequest, args: Record<string, unknown>) =>
    request.method === 'prompts/get'
      ? request.upstream!.getPrompt(
          request.entry.prompt,
          args as Record<string, string>,
          callOptions(deps, request),
        )
      : request.method === 'resources/read'
        ? request.upstream!.readResource(request.entry.uri, callOptions(deps, request))
        : request.upstream!.callTool(request.entry.tool, args, callOptions(deps, request)),
  checkResult: (deps: PipelineDeps, request: ForwardedRequest, result: unknown) =>
    request.method === 'prompts/get'
      ? checkPromptResult(deps, request, result)
      : request.method === 'resources/read'
        ? checkReadResult(deps, request, result)
        : checkResult(deps, request, result),
};

/**
 * One forwarded request through its steps: shape and size → rules and ask → arguments (the
 * tool's pinned input schema, or the prompt's declared arguments) → availability → (decision
 * entry, durable) → forward → result checks → sanitise → (result entry) → reply. The catalog
 * lookup ran before (`lookup`): the request names a listed tool or prompt. Every refusal is an
 * error result that says what happened and what to do (for a prompt, the caller turns it into a
 * JSON-RPC error); nothing refused reaches the upstream.
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
  request: ForwardedRequest,
): Promise<PromptResult | ReadResult | CallToolResult> {
  const args = (request.args ?? {}) as Record<string, unknown>;
  // The arguments are serialised once: their canonical JSON gives the size cap its count and the
  // decision entry its digest.
  const { json, digest } = canonicalForm(args);
  const shaped = shapeAndSize(deps, request, json);
  if (!shaped.pass) return refuse(deps, request, shaped, digest);

  const verdict = await rulesAndAsk(deps, request, args);
  if (!verdict.pass) return refuse(deps, request, verdict, digest);
  for (const step of [() => byMethod.checkArguments(deps, request, args), () => availability(request)]) {
    const outcome = await step();
    if (!outcome.pass) return refuse(deps, request, outcome, digest);
  }

  // A client that gave up while the checks ran (an ask can take minutes) gets nothing forwarded.
  if (request.signal?.aborted) return refuse(deps, request, CANCELLED_BEFORE_FORWARD, digest);
  const decisionSeq = await recordDecision(
    deps,
    request,
    { allowed: true, rule: verdict.rule, reason: verdict.reason },
    digest,
  );
  const label = requestLabel(request);
  let result: unknown;
  try {
    result = await byMethod.forward(deps, request, args);
  } catch (error) {
    const ended = endedWithoutAnswer(request, error);
    // The server chooses the text of its own errors: it is capped and made printable for the
    // model, and the audit log keeps only its digest (it may echo the arguments, never stored).
    const message = upstreamErrorText(error);
    await recordResult(deps, request, decisionSeq, {
      result: message,
      isError: true,
      reason: ended?.reason ?? 'upstream failed',
      ...(ended?.cancelled ? { cancelled: ended.cancelled } : {}),
    });
    return errorResult(
      ended?.reply ??
        `ringfence: ${label} failed upstream: ${message}. The server's last output is shown by: ringfence mcp ls --logs`,
    );
  }

  const checked = sanitise(deps, request, await byMethod.checkResult(deps, request, result));
  // The decision was made durable before forwarding; the result entry is deferred (it shares the
  // next call's write and fsync, or is written within 50 ms; the log keeps its order) and not
  // awaited, so neither this reply nor the next call waits for a second fsync.
  recordResult(
    deps,
    request,
    decisionSeq,
    {
      // The digest the size check computed, when it could: the result is not serialised again.
      result: checked.digest ?? result,
      isError: checked.reply.isError === true,
      ...(checked.refused ? { reason: `result withheld: ${checked.refused}` } : {}),
      ...(checked.dropped ? { dropped: checked.dropped } : {}),
    },
    { defer: true },
  ).catch((error: unknown) =>
    deps.log(
      `ringfence: audit: the result of ${shownRequestLabel(request)} could not be recorded: ${rendered((error as Error).message, 'line')}`,
    ),
  );
  return checked.reply;
}

const CANCELLED_BEFORE_FORWARD: Refusal = {
  pass: false,
  code: 'CANCELLED',
  rule: 'cancelled',
  reason: 'the client cancelled the call before it was forwarded',
  what: 'the client cancelled the call before it was forwarded; nothing reached the server.',
};

/** The client's cancel and progress, and the policy's cap on the call's whole time. */
function callOptions(deps: PipelineDeps, request: ForwardedRequest): CallOptions {
  const { server } = request.entry;
  const cap = deps.policy.maxCallSeconds(server);
  return {
    ...(request.signal ? { signal: request.signal } : {}),
    ...(request.onProgress ? { onProgress: request.onProgress } : {}),
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
  const label = requestLabel(request);
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
        reply: `ringfence: ${label} failed: ${upstreamErrorText(new Error(error.message))}. Check that the server is up; its last output is shown by: ringfence mcp ls --logs`,
      };
    default:
      return undefined;
  }
}
