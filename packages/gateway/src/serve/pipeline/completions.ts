import { printable } from '../../text/printable.js';
import { type ResultOutcome, withheld } from './results.js';
import { isPlainObject } from './steps.js';
import { type CompletionRequest, PASS, type StepOutcome } from './types.js';

/** MCP's own limit on the values of one completion. */
export const COMPLETION_MAX_VALUES = 100;
/** Completions are shown to people as they type: longer values are cut. */
export const COMPLETION_VALUE_MAX = 200;

export interface CompletionAnswer {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

/** The variable names of an RFC 6570 URI template (`{a}`, `{+b}`, `{?c,d*}`, `{e:3}`). */
export function templateVariables(template: string): Set<string> {
  const names = new Set<string>();
  for (const [, body] of template.matchAll(/\{([^{}]*)\}/g)) {
    for (const part of (body ?? '').replace(/^[+#./;?&]/, '').split(','))
      names.add(part.replace(/(\*|:\d+)$/, ''));
  }
  return names;
}

/**
 * The completion's arguments check, after the rules: the argument being completed and every one
 * of the context must be an argument the pinned prompt declares (or a variable of the pinned
 * template). The values are strings by then (`completePrompt` builds the request).
 */
export function completionArguments(request: CompletionRequest, args: Record<string, unknown>): StepOutcome {
  const { entry } = request;
  const declared =
    entry.kind === 'prompt' ? new Set(entry.arguments.map((a) => a.name)) : templateVariables(entry.template);
  const what =
    entry.kind === 'prompt' ? 'the prompt does not declare an argument' : 'the template has no variable';
  const undeclared = Object.keys(args).find((name) => !declared.has(name));
  if (undeclared === undefined) return PASS;
  const reason = `${what} ${JSON.stringify(undeclared)}${undeclared === request.argument ? '' : ' (in context.arguments)'}`;
  return {
    pass: false,
    code: 'COMPLETION_ARGUMENTS',
    rule: 'completion-arguments',
    reason,
    what: `${reason}; nothing was asked.`,
    next: `Complete one of: ${declared.size > 0 ? [...declared].map((n) => JSON.stringify(n)).join(', ') : 'none'}.`,
  };
}

/** The completion request as its server receives it: its own names, and only what `args` holds. */
export function upstreamCompletion(request: CompletionRequest, args: Record<string, unknown>) {
  const { entry, argument } = request;
  const { [argument]: value, ...context } = args;
  return {
    ref:
      entry.kind === 'prompt'
        ? { type: 'ref/prompt', name: entry.prompt }
        : { type: 'ref/resource', uri: entry.template },
    argument: { name: argument, value },
    ...(Object.keys(context).length > 0 ? { context: { arguments: context } } : {}),
  };
}

/**
 * A server's completion answer as a client may show it: at most 100 values, each a string cut
 * to 200 characters and made printable; `total` and `hasMore` only when well-formed. A malformed
 * answer is withheld (the request did reach the server).
 */
export function checkCompletionResult(
  request: CompletionRequest,
  result: unknown,
): ResultOutcome<CompletionAnswer> {
  const completion = isPlainObject(result) ? result.completion : undefined;
  if (!isPlainObject(completion) || !Array.isArray(completion.values))
    return withheld(request, 'the server sent a malformed completion');
  if (!completion.values.every((v) => typeof v === 'string'))
    return withheld(request, 'the server sent completion values that are not strings');
  const values = (completion.values as string[])
    .slice(0, COMPLETION_MAX_VALUES)
    .map((v) => printable(v.length > COMPLETION_VALUE_MAX ? `${v.slice(0, COMPLETION_VALUE_MAX)}…` : v));
  const { total, hasMore } = completion;
  const cut = completion.values.length > COMPLETION_MAX_VALUES;
  return {
    reply: {
      completion: {
        values,
        ...(Number.isSafeInteger(total) && (total as number) >= 0 ? { total: total as number } : {}),
        ...(typeof hasMore === 'boolean' || cut ? { hasMore: cut || hasMore === true } : {}),
      },
    },
  };
}
