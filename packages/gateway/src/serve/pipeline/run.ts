import type { CallToolResult } from '../../ports/caller.js';
import { checkPromptResult, promptArguments } from './prompts.js';
import { errorResult, recordDecision, recordResult, refuse, requestLabel } from './record.js';
import { checkResult, sanitise, upstreamErrorText } from './results.js';
import { availability, inputSchema, rulesAndAsk, shapeAndSize } from './steps.js';
import type {
  ForwardedRequest,
  PipelineDeps,
  PromptGetRequest,
  PromptResult,
  ToolCallRequest,
} from './types.js';

/** What differs by method: the arguments check, the forwarding, and the result check. */
const byMethod = {
  checkArguments: (deps: PipelineDeps, request: ForwardedRequest, args: Record<string, unknown>) =>
    request.method === 'prompts/get' ? promptArguments(request, args) : inputSchema(deps, request, args),
  forward: (request: ForwardedRequest, args: Record<string, unknown>) =>
    request.method === 'prompts/get'
      ? request.upstream!.getPrompt(request.entry.prompt, args as Record<string, string>)
      : request.upstream!.callTool(request.entry.tool, args),
  checkResult: (deps: PipelineDeps, request: ForwardedRequest, result: unknown) =>
    request.method === 'prompts/get'
      ? checkPromptResult(deps, request, result)
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
  request: ForwardedRequest,
): Promise<PromptResult | CallToolResult> {
  const shaped = shapeAndSize(deps, request);
  if (!shaped.pass) return refuse(deps, request, shaped);
  const args = (request.args ?? {}) as Record<string, unknown>;

  const verdict = await rulesAndAsk(deps, request, args);
  if (!verdict.pass) return refuse(deps, request, verdict);
  for (const step of [() => byMethod.checkArguments(deps, request, args), () => availability(request)]) {
    const outcome = await step();
    if (!outcome.pass) return refuse(deps, request, outcome);
  }

  const decisionSeq = await recordDecision(deps, request, {
    allowed: true,
    rule: verdict.rule,
    reason: verdict.reason,
  });
  const label = requestLabel(request);
  let result: unknown;
  try {
    result = await byMethod.forward(request, args);
  } catch (error) {
    // The server chooses this text: it is capped and made printable for the model, and the audit
    // log keeps only its digest (it may echo the arguments, which are never stored).
    const message = upstreamErrorText(error);
    await recordResult(deps, request, decisionSeq, {
      result: message,
      isError: true,
      reason: 'upstream failed',
    });
    return errorResult(
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
      result,
      isError: checked.reply.isError === true,
      ...(checked.refused ? { reason: `result withheld: ${checked.refused}` } : {}),
      ...(checked.dropped ? { dropped: checked.dropped } : {}),
    },
    { defer: true },
  ).catch((error: unknown) =>
    deps.log(`ringfence: audit: the result of ${label} could not be recorded: ${(error as Error).message}`),
  );
  return checked.reply;
}
