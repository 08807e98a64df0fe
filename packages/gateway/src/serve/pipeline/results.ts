import type { PrecomputedDigest } from '../../audit/format.js';
import type { CallToolResult } from '../../ports/caller.js';
import { clip, rendered } from '../../text/render.js';
import { validationSentence } from '../../text/validation-error.js';
import { shownRequestLabel } from './methods.js';
import { errorResult } from './record.js';
import { measureAndDigest, measureResult, resultTooLarge } from './result-size.js';
import type { Rebuild } from './sanitise.js';
import { isPlainObject, shownVerdict } from './steps.js';
import type { ForwardedRequest, PipelineDeps, ToolCallRequest } from './types.js';

const ERROR_TEXT_MAX = 300;

const errorCode = (error: unknown): string => {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'number' || typeof code === 'string' ? `[${code}] ` : '';
};
// The SDK's validation of a malformed answer would otherwise reach the model as a JSON dump.
const errorMessage = (error: unknown): string =>
  validationSentence(error) ?? String((error as Error)?.message ?? error);

/**
 * An upstream failure as the model (and a client showing the reply or the JSON-RPC error) reads
 * it: its code, and at most 300 of the server's characters, cut first (so no escape is cut in
 * half), then rendered once as one line: the message sits inside a sentence of the gateway's
 * (`ringfence: S/T failed upstream: …`), and a newline in it could begin a line that reads as the
 * gateway's own (`ringfence: the person approved …`). As a progress message is.
 */
export function upstreamErrorText(error: unknown): string {
  return errorCode(error) + rendered(clip(errorMessage(error), ERROR_TEXT_MAX), 'line');
}

/**
 * The same failure as it came (its code and at most 300 characters), not rendered: for a report
 * line, which renders it once, as one line, where it is composed.
 */
export function upstreamErrorSource(error: unknown): string {
  return errorCode(error) + clip(errorMessage(error), ERROR_TEXT_MAX);
}

/** What is left of a result after a check: the reply, why it was withheld, and what was dropped. */
export interface ResultOutcome<Reply = CallToolResult> {
  /** The answer for the client, or (when withheld) an error result saying why. */
  readonly reply: Reply | CallToolResult;
  /** Why the server's answer was withheld (for the result entry); the reply then says so. */
  readonly refused?: string;
  /** Members and content items of the server's answer the client did not receive as sent. */
  readonly dropped?: number;
  /** The audit digest of what the server sent, when the size check computed it (one serialisation). */
  readonly digest?: PrecomputedDigest;
}

/** The server's own cap (`mcp add --max-result-mb`), else the gateway's. */
export function resultCap(deps: PipelineDeps, request: ForwardedRequest): number {
  return request.upstream?.limits.maxResultBytes ?? deps.maxResultBytes;
}

export function withheld(request: ForwardedRequest, why: string, shown: string = why): ResultOutcome<never> {
  return {
    reply: errorResult(
      `ringfence withheld the result of ${shownRequestLabel(request)}: ${shown}. The ${request.method === 'tools/call' ? 'call' : 'request'} reached the server; its answer was not passed on.`,
    ),
    refused: why,
  };
}

/**
 * Result checks: shape, size and the pinned output schema. On a refusal the call did reach the
 * server; what it answered is withheld and `refused` says why (for the result entry). What passes
 * is still the server's object: `sanitise` rebuilds it next.
 */
export async function checkResult(
  deps: PipelineDeps,
  request: ToolCallRequest,
  result: unknown,
): Promise<ResultOutcome> {
  const refuse = (why: string) => withheld(request, why);
  if (!isPlainObject(result) || !Array.isArray(result.content))
    return refuse('the server sent a malformed result');
  if (result.isError !== undefined && typeof result.isError !== 'boolean')
    return refuse('the server sent a malformed isError');
  if (result.structuredContent !== undefined && !isPlainObject(result.structuredContent)) {
    return refuse('the server sent structuredContent that is not an object');
  }
  let measured: ReturnType<typeof measureAndDigest>;
  try {
    measured = measureAndDigest(result);
  } catch {
    // Parsing JSON has no depth limit but serialising it does (the stack): a result a few
    // thousand levels deep parses upstream and would otherwise throw here, and in the digest.
    return refuse('the server sent a result nested too deeply to check');
  }
  const { size, digest } = measured;
  const cap = resultCap(deps, request);
  if (size > cap) return { ...refuse(resultTooLarge(request, size, cap)), digest };
  const { entry } = request;
  const verdict = await deps.guard.checkResult(entry.outputSchema, result, { key: entry.server });
  if (!verdict.ok) {
    const said = verdict.message ?? String(verdict.code);
    const why = (text: string) => `it does not match the tool's pinned output schema (${text})`;
    return { ...withheld(request, why(said), why(shownVerdict(said))), digest };
  }
  return { reply: result as CallToolResult, digest };
}

/**
 * Sanitise, after the result checks: only what the MCP version negotiated with this client
 * defines goes on (`sanitise.ts`), for a tool result and for a prompt's messages alike; a defined
 * member of the wrong type withholds the result.
 */
export function sanitise(
  deps: PipelineDeps,
  request: ForwardedRequest,
  checked: ResultOutcome<unknown>,
  steps: { readonly rebuild?: Rebuild; readonly followsLinks?: boolean },
): ResultOutcome<unknown> {
  const { rebuild } = steps;
  if (checked.refused || !rebuild) return checked;
  const { server } = request.entry;
  const context = {
    protocolVersion: request.protocolVersion,
    server,
    label: shownRequestLabel(request),
    // Links and embedded resources may be followed; what a read returns is only named.
    linkUri: (uri: string) => deps.linkUri(server, uri, steps.followsLinks === true),
    // The output schema checked structuredContent (`checkResult`); without one it must agree with the text.
    structuredChecked: request.method === 'tools/call' && request.entry.outputSchema !== undefined,
  };
  const outcome = rebuild(checked.reply as Record<string, unknown>, context);
  const { digest } = checked;
  if (!outcome.ok)
    return { ...withheld(request, `the server sent a malformed result (${outcome.problem})`), digest };
  // Namespaced URIs and the note on dropped items can make a result of many tiny
  // items several times larger than what was sent; the cap holds for what the client receives too.
  // One cap, counted one way (`measureResult`), before and after.
  if (outcome.dropped > 0) {
    const size = measureResult(outcome.reply);
    const cap = resultCap(deps, request);
    if (size > cap)
      return {
        ...withheld(
          request,
          resultTooLarge(request, size, cap, "once its URIs point into the gateway's namespace"),
        ),
        digest,
      };
  }
  return { reply: outcome.reply, dropped: outcome.dropped, digest };
}
