import { rendered } from '../../text/render.js';
import { measureAndDigest, resultTooLarge } from './result-size.js';
import { type ResultOutcome, resultCap, withheld } from './results.js';
import { isPlainObject } from './steps.js';
import {
  PASS,
  type PipelineDeps,
  type PromptGetRequest,
  type PromptResult,
  type StepOutcome,
} from './types.js';

/**
 * Prompt arguments: MCP prompt arguments are strings, by name. Only the names the pinned prompt
 * declares may be sent, each as a string, and every argument it requires must be there.
 */
export function promptArguments(request: PromptGetRequest, args: Record<string, unknown>): StepOutcome {
  const declared = request.entry.arguments;
  // The declared names are the server's words (its pinned prompt): what the client is told shows
  // them rendered once, as names, so none can carry a line break or a bidirectional character into
  // the gateway's sentence; the audit reason keeps them as they came (`audit tail` renders it).
  const name = (text: string) => rendered(text, 'name');
  const refuse = (reason: string, shown: string = reason): StepOutcome => ({
    pass: false,
    code: 'PROMPT_ARGUMENTS',
    rule: 'prompt-arguments',
    reason,
    what: `${shown}.`,
    next: `The prompt declares: ${declared.length > 0 ? declared.map((a) => `${name(a.name)}${a.required ? ' (required)' : ''}`).join(', ') : 'no arguments'}. Fix the arguments and request it again.`,
  });
  for (const [name, value] of Object.entries(args)) {
    if (!declared.some((a) => a.name === name))
      return refuse(`the prompt does not declare an argument ${JSON.stringify(name)}`);
    if (typeof value !== 'string') return refuse(`argument ${JSON.stringify(name)} must be a string`);
  }
  const missing = declared.filter((a) => a.required && !Object.hasOwn(args, a.name)).map((a) => a.name);
  if (missing.length > 0)
    return refuse(
      `required argument(s) missing: ${missing.join(', ')}`,
      `required argument(s) missing: ${missing.map(name).join(', ')}`,
    );
  return PASS;
}

const ROLES = new Set(['user', 'assistant']);

/**
 * A `prompts/get` answer: an object with a `messages` list of `{role, content}` (role user or
 * assistant, content an object with a string `type`), an optional string description, and no
 * bigger than the result cap. What passes is still the server's object: `sanitise` rebuilds it
 * next, as it does a tool result. On a refusal the request did reach the server; `refused` says
 * why (for the result entry).
 */
export function checkPromptResult(
  deps: PipelineDeps,
  request: PromptGetRequest,
  result: unknown,
): ResultOutcome<PromptResult> {
  const refuse = (why: string) => withheld(request, why);
  if (!isPlainObject(result) || !Array.isArray(result.messages))
    return refuse('the server sent a malformed prompt (no messages list)');
  if (result.description !== undefined && typeof result.description !== 'string')
    return refuse('the server sent a description that is not a string');
  for (const [index, message] of result.messages.entries()) {
    if (!isPlainObject(message) || !ROLES.has(message.role as string))
      return refuse(`message ${index} is not a user or assistant message`);
    if (!isPlainObject(message.content) || typeof message.content.type !== 'string')
      return refuse(`message ${index} has no content of a named type`);
  }
  let measured: ReturnType<typeof measureAndDigest>;
  try {
    measured = measureAndDigest(result);
  } catch {
    // As for a tool result: parsing has no depth limit, serialising does.
    return refuse('the server sent a result nested too deeply to check');
  }
  const { size, digest } = measured;
  const cap = resultCap(deps, request);
  if (size > cap) return { ...refuse(resultTooLarge(request, size, cap)), digest };
  return { reply: result as PromptResult, digest };
}
