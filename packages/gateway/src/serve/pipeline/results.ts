import type { CallToolResult } from '../../ports/caller.js';
import { printable } from '../../text/printable.js';
import { errorResult, requestLabel } from './record.js';
import { measureResult, resultTooLarge } from './result-size.js';
import { isPlainObject } from './steps.js';
import type { ForwardedRequest, PipelineDeps } from './types.js';

const ERROR_TEXT_MAX = 300;

/** An upstream failure as the model may read it: its code, and at most 300 printable characters. */
export function upstreamErrorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const text = printable(String((error as Error)?.message ?? error));
  const clipped =
    text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX)}… (${text.length} characters)` : text;
  return typeof code === 'number' || typeof code === 'string' ? `[${code}] ${clipped}` : clipped;
}

/**
 * Result checks: shape, size and the pinned output schema. On a refusal the call did reach the
 * server; what it answered is withheld and `refused` says why (for the result entry).
 */
export async function checkResult(
  deps: PipelineDeps,
  request: ForwardedRequest,
  result: unknown,
): Promise<{ reply: CallToolResult; refused?: string }> {
  const refuse = (why: string) => ({
    reply: errorResult(
      `ringfence withheld the result of ${requestLabel(request)}: ${why}. The call reached the server; its answer was not passed on.`,
    ),
    refused: why,
  });
  if (!isPlainObject(result) || !Array.isArray(result.content))
    return refuse('the server sent a malformed result');
  if (result.isError !== undefined && typeof result.isError !== 'boolean')
    return refuse('the server sent a malformed isError');
  if (result.structuredContent !== undefined && !isPlainObject(result.structuredContent)) {
    return refuse('the server sent structuredContent that is not an object');
  }
  const size = measureResult(result);
  const cap = request.upstream?.limits.maxResultBytes ?? deps.maxResultBytes;
  if (size > cap) return refuse(resultTooLarge(request, size, cap));
  const { entry } = request;
  const verdict = await deps.guard.checkResult(entry.outputSchema, result, { key: entry.server });
  if (!verdict.ok)
    return refuse(`it does not match the tool's pinned output schema (${verdict.message ?? verdict.code})`);
  const { _meta: _dropped, ...reply } = result;
  // An error result was not checked against the output schema, so its structured part goes no further.
  if (reply.isError === true) delete reply.structuredContent;
  return { reply: reply as CallToolResult };
}
